"""The demo warehouse's marts, row for row, against the digest stored in tests/dbt/demo_marts.digest.

A refactoring changes structure, not numbers: this fails naming every mart whose columns, types, row count or rows
(run-specific columns aside, doubles to 9 decimals: scripts/marts_snapshot.py) differ from the stored digest. A
change that means to move a number regenerates the digest in the same commit, and says so:

    python scripts/marts_snapshot.py digest <demo warehouse> > tests/dbt/demo_marts.digest

(the demo warehouse of the test session: tests/support/dashboard.py `demo_warehouse`, as of 2026-11-01).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.support.dashboard import demo_or_fail

ROOT = Path(__file__).resolve().parents[2]
DIGEST = Path(__file__).with_name("demo_marts.digest")


def test_the_demo_marts_equal_the_stored_digest(tmp_path_factory: pytest.TempPathFactory) -> None:
    demo = demo_or_fail(tmp_path_factory.getbasetemp())
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "marts_snapshot.py"), "digest", str(demo.db), "--check", str(DIGEST)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert f"checked {len(DIGEST.read_text().splitlines())} marts: 0 differ" in result.stdout


def test_the_digest_check_names_a_mart_that_changed(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create schema marts")
        con.execute("create table marts.rates as select 'a' as metric, 0.25 as rate, now() as built_at")
    script = [sys.executable, str(ROOT / "scripts" / "marts_snapshot.py"), "digest", str(db)]
    stored = tmp_path / "stored.digest"
    stored.write_text(subprocess.run(script, capture_output=True, text=True, check=True).stdout)
    same = subprocess.run([*script, "--check", str(stored)], capture_output=True, text=True, check=False)
    assert same.returncode == 0 and "checked 1 marts: 0 differ" in same.stdout
    with duckdb.connect(str(db)) as con:
        con.execute("update marts.rates set rate = 0.26")
    changed = subprocess.run([*script, "--check", str(stored)], capture_output=True, text=True, check=False)
    assert changed.returncode == 1
    assert "rates:" in changed.stdout and "checked 1 marts: 1 differ" in changed.stdout
