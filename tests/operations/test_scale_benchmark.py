"""bench/scale.py, the one-command scale benchmark: its data+ingest and disk phases at a tiny scale, its one-line
refusals, and the goals its Markdown states from the figures (its timings are bench's, not a test's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb

from bench.scale import copy_warehouse, remove_warehouse
from bench.scale_report import markdown
from warehouse.build_record import last_build, record_build

ROOT = Path(__file__).resolve().parents[2]


def scale_bench(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.scale", *map(str, args)],
        cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600, check=False,
    )  # fmt: skip


def test_ingest_one_source_at_a_time_then_disk(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    done = scale_bench("--scales", "0.02", "--work", tmp_path, "--phases", "data+ingest,disk", "--keep", "--out", out)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    figures = json.loads(out.read_text())["scales"]["0.02"]
    sources = figures["data+ingest"]["sources"]
    assert list(sources) == ["analyzer", "session_feedback", "reactions", "workspace"]
    assert all(source["files_mb"] > 0 and source["ingest"]["peak_rss_mb"] > 0 for source in sources.values())
    folder = tmp_path / "scale-0.02"
    assert not list(folder.glob("data-*")), "a source's files were left after its ingest"
    with duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True) as con:
        loaded = {row[0] for row in con.execute("select distinct target_table from raw.load_manifest").fetchall()}
    assert len(loaded) >= 4, loaded
    assert figures["disk"]["warehouse_mb"] > 0
    assert "| ingest, all sources |" in done.stdout


def test_a_scale_the_disk_cannot_hold_is_refused_in_one_line(tmp_path: Path) -> None:
    done = scale_bench("--scales", "100000000", "--work", tmp_path)
    assert done.returncode == 1
    error = done.stderr.strip()
    assert error.startswith("error: scale 1e+08 needs about") and "the largest scale it holds is about" in error
    assert "\n" not in error


def test_a_phase_alone_without_its_warehouse_is_one_line(tmp_path: Path) -> None:
    done = scale_bench("--scales", "1", "--work", tmp_path, "--phases", "build")
    assert done.returncode == 1
    assert done.stderr.strip().startswith("error: no warehouse") and "Traceback" not in done.stderr


def test_goals_and_growth_from_the_figures() -> None:
    small = {"build": {"seconds": 60.0}, "disk": {"warehouse_mb": 1000.0}}
    large = {
        "build": {"seconds": 660.0, "peak_rss_mb": 9000},
        "nightly": {
            "nightly": {"seconds": 100.0},
            "full_refresh": {"seconds": 200.0},
            "publish": {"seconds": 10.0},
            "publish_full": None,
        },
        "queries": {"pages": {"Overview": {"calls": 3, "p50_ms": 100, "p95_ms": 250}}},
        "forget": {"one_user": {"seconds": 10.0}, "batch_100": {"seconds": 14.0}},
        "disk": {"warehouse_mb": 9000.0},
    }
    text = markdown({"scales_compared": ["100", "1000"], "scales": {"100": small, "1000": large}})
    assert "| build | 11.0x |" in text and "| disk (warehouse) | 9.0x |" in text
    assert "for 10x the data, pro rata | 11.00x: met (allowed 12.0x for 10x the data) |" in text
    assert "a full refresh (publish included), larger scale | 0.50x: NOT met |" in text
    assert "a full publish, larger scale | not measured |" in text
    assert "| `publish --full` | n/a | not available |" in text
    assert "worst 250 ms: met" in text and "largest 9,000 MB: NOT met" in text
    assert "one user's cost, larger scale | 1.40x: met |" in text


def test_the_build_bound_follows_the_growth_of_the_data() -> None:
    """12x for 10x the data, pro rata: 9.6x for scale 800 beside scale 100, so 10x there is not met."""
    small, large = {"build": {"seconds": 60.0}}, {"build": {"seconds": 600.0}}
    text = markdown({"scales_compared": ["100", "800"], "scales": {"100": small, "800": large}})
    assert "| 10.00x: NOT met (allowed 9.6x for 8x the data) |" in text


def test_a_copied_warehouse_keeps_its_build_record(tmp_path: Path) -> None:
    """The nightly and forget phases work on copies: without the record the copy's builds (the nightly's,
    forget's rebuild) would test every row, not the new loads the phases mean to measure."""
    db = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(db)).close()
    record_build(db, "build-1", "2026-11-01 23:59:59.999999")
    copy = copy_warehouse(db, tmp_path / "nightly.duckdb")
    copied = last_build(copy)
    assert copied is not None and copied.build_id == "build-1", copied
    remove_warehouse(copy)
    assert last_build(copy) is None and not copy.exists()
    assert last_build(db) is not None
