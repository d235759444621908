"""`demo-data --source NAME`: one source alone, the same bytes as among all (bench/scale.py generates and
ingests the sources of a big scale one at a time, which the disk can hold)."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

from tests.support.ingest import run_cli


def tree(folder: Path) -> dict[str, str]:
    """Every file under `folder` but sources.toml: its path -> its bytes' digest."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != "sources.toml"
    }


def demo(out: Path, *sources: str) -> Path:
    options = [arg for source in sources for arg in ("--source", source)]
    result = run_cli("demo-data", out, "--scale", "0.02", "--as-of", "2026-11-01", "--seed", "7", "-q", *options)
    assert result.returncode == 0, result.stderr
    return out


def test_sources_written_alone_are_those_written_together(tmp_path: Path) -> None:
    whole = tree(demo(tmp_path / "all"))
    first = demo(tmp_path / "first", "analyzer", "workspace")
    second = demo(tmp_path / "second", "reactions", "session_feedback")
    assert tree(first).keys().isdisjoint(tree(second))
    assert tree(first) | tree(second) == whole
    named = tomllib.loads((first / "sources.toml").read_text())
    assert sorted(named) == ["analyzer", "workspace"]
    assert sorted(tomllib.loads((second / "sources.toml").read_text())) == ["reactions", "session_feedback"]


def test_an_unknown_source_is_one_line(tmp_path: Path) -> None:
    result = run_cli("demo-data", tmp_path / "out", "--source", "nope")
    assert result.returncode != 0
    assert "Invalid value for '--source'" in result.stderr and "Traceback" not in result.stderr
