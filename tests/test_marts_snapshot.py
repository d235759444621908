"""scripts/marts_snapshot.py, the before/after check of a refactoring: equal marts compare equal (run-specific
columns aside), a changed number does not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "marts_snapshot.py"


def warehouse(path: Path, rate: float, loaded_at: str) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute("create schema marts")
        con.execute("create table marts.rates (metric varchar, rate double, loaded_at timestamp)")
        con.execute("insert into marts.rates values ('a', ?, ?), ('b', 0.5, ?)", [rate, loaded_at, loaded_at])
    return path


def snapshot(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, check=False, timeout=60
    )


def test_equal_marts_compare_equal_and_a_changed_rate_does_not(tmp_path: Path) -> None:
    first = warehouse(tmp_path / "one.duckdb", 0.1 + 0.2, "2026-11-01 10:00:00")
    second = warehouse(tmp_path / "two.duckdb", 0.3, "2026-11-02 11:00:00")  # another load time, same numbers
    third = warehouse(tmp_path / "three.duckdb", 0.31, "2026-11-01 10:00:00")
    for db in (first, second, third):
        assert snapshot("dump", db, tmp_path / db.stem).returncode == 0
    same = snapshot("compare", tmp_path / "one", tmp_path / "two")
    assert same.returncode == 0, same.stdout
    assert "compared 1 marts: 0 differ" in same.stdout
    changed = snapshot("compare", tmp_path / "one", tmp_path / "three")
    assert changed.returncode == 1
    assert "rates: 1 row(s) only before, 1 only after" in changed.stdout
