"""Reactions written by the platform's own code (the replay of tests/support/kdcube.py: the index on a real
PostgreSQL with the upstream DDL, the blob tree on disk), ingested and built, against an independent oracle:
the platform's own conversations-in-period report re-implemented from its code (ctx_rag.py:1581-1760), per
conversation, over what its index holds.

Three warehouses from one replay: the index and the blobs (the index decides), the blobs alone (history: a
cleared reaction still counts, and the warehouse says so), and the index alone.
"""

from __future__ import annotations

import datetime as dt
import sys
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.support.dbt import run_dbt
from tests.support.kdcube import conversations_in_period
from tests.support.kdcube_replay import Replay, replay
from tests.support.postgres import PostgresServer

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
MARTS = ("conversation_feedback_summary", "turn_reactions_active", "reaction_satisfaction_daily", "reaction_sources")


def _run(args: list[str]) -> None:
    import subprocess

    result = subprocess.run(
        [sys.executable, "-m", "cli", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def _build(db: Path, work_dir: Path, as_of: str) -> None:
    selection = [f"+{m}" for m in MARTS]
    # the tests of other areas' staging models are left to the full build (they read models not built here)
    command = ["build", "--select", *selection, "--indirect-selection", "cautious"]
    # unit tests check the SQL on fixed rows, whatever the warehouse: test_project's full build runs every one
    command += ["--exclude-resource-type", "unit_test"]
    command += ["--exclude", "assert_staging_keeps_every_raw_row", "--vars", f"{{as_of: '{as_of}'}}"]
    result = run_dbt(command, warehouse=db, work_dir=work_dir)
    assert result.returncode == 0, result.stdout[-6000:]


@pytest.fixture(scope="module")
def replayed(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Replay, str]]:
    name = f"kdcube_{uuid.uuid4().hex[:10]}"
    pg_server.psql(f"create database {name}")
    try:
        dsn = pg_server.dsn(name)
        yield replay(dsn, tmp_path_factory.mktemp("kdcube-storage")), dsn
    finally:
        pg_server.psql(f"drop database if exists {name} with (force)")


@pytest.fixture(scope="module")
def warehouses(replayed: tuple[Replay, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    run, dsn = replayed

    def load_and_build(kind: str) -> Path:
        work_dir = tmp_path_factory.mktemp(f"reactions-{kind}")
        db = work_dir / "wh.duckdb"
        if kind in ("both", "index"):
            _run(["ingest", "reactions", "--postgres", dsn, "--db", str(db), "-q"])
        if kind in ("both", "blobs"):
            _run(["ingest", "reactions", str(run.storage), "--db", str(db), "-q"])
        # as of now: after the checks of the index, which say what was active then
        _build(db, work_dir, _now())
        return db

    return _each(("both", "blobs", "index"), load_and_build)


def _each(kinds: tuple[str, ...], work: Callable[[str], Path]) -> dict[str, Path]:
    """`work` for every kind at once: separate files and processes, and most of a dbt run is one core's parse
    of the project, so the warehouses take about the time of one on the machine's two cores."""
    with ThreadPoolExecutor(max_workers=len(kinds)) as pool:
        done = {kind: pool.submit(work, kind) for kind in kinds}
        return {kind: future.result() for kind, future in done.items()}


def _now() -> str:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None).isoformat() + "Z"


def _rows(db: Path, sql: str) -> list[dict[str, Any]]:
    with duckdb.connect(str(db), read_only=True) as con:
        cursor = con.execute(sql)
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


def _summary(db: Path) -> dict[tuple, dict]:
    out = {}
    for r in _rows(db, "select * from marts.conversation_feedback_summary"):
        key = (r["source_tenant_id"], r["project"], r["conversation_id"])
        out[key] = {k: r[k] for k in ("total", "user", "machine", "ok", "not_ok", "neutral")}
    return out


def _oracle(run: Replay) -> dict[tuple, dict]:
    start = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    return conversations_in_period(run.platforms, start, run.end.replace(tzinfo=dt.UTC))


def test_the_replay_covers_what_the_platform_does(replayed: tuple[Replay, str]):
    """Not a check of ours: the replay itself holds every case the issue names."""
    run, _ = replayed
    assert run.ops["not_ok_then_clear"] >= 5 and run.ops["machine_null"] >= 3 and run.ops.get("machine_low", 0) >= 1
    assert len(run.cleared) >= 5
    assert run.blobs > run.reaction_blobs > 0  # messages and turn logs beside the reactions


@pytest.mark.parametrize("kind", ["both", "index"])
def test_active_counts_equal_the_platforms_own_report_per_conversation(
    kind: str, replayed: tuple[Replay, str], warehouses: dict[str, Path]
):
    run, _ = replayed
    expected = {k: v for k, v in _oracle(run).items() if v["total"]}
    assert _summary(warehouses[kind]) == expected
    # machine reactions without a value count in total, machine and neutral (ctx_rag.py:1748)
    assert sum(v["neutral"] for v in expected.values()) >= 1


def test_blobs_alone_are_history_and_say_so(replayed: tuple[Replay, str], warehouses: dict[str, Path]):
    """Blobs cannot tell a clear: each cleared reaction that was its turn's last still counts, so the user count
    exceeds the platform's by exactly those; the warehouse names blobs as the deciding part."""
    run, _ = replayed
    expected, got = _oracle(run), _summary(warehouses["blobs"])
    extra_user = sum(v["user"] for v in got.values()) - sum(v["user"] for v in expected.values())
    # the turns whose last user operation was a clear after some reaction: the blobs' latest reaction there counts
    assert extra_user == sum(run.ends_cleared.values()) > 0
    parts = _rows(warehouses["blobs"], "select distinct active_part from marts.reaction_sources")
    assert parts == [{"active_part": "blobs"}]
    sources = _rows(warehouses["both"], "select * from marts.reaction_sources order by tenant")
    assert {s["active_part"] for s in sources} == {"index"}
    assert [s["tenant"] for s in sources] == ["acme-corp", "globex"]
    assert {s["index_schema"] for s in sources} == {"kdcube_acme_corp_support", "kdcube_globex_docs_qa"}


def test_a_reaction_in_both_parts_counts_once(replayed: tuple[Replay, str], warehouses: dict[str, Path]):
    run, _ = replayed
    db = warehouses["both"]
    active = _rows(db, "select rn from marts.turn_reactions_active")
    assert len(active) == len({r["rn"] for r in active})
    index_rows = sum(
        1 for p in run.platforms for r in p.index_rows() if "artifact:turn.log.reaction" in (r["tags"] or [])
    )
    assert len(active) == index_rows
    # every active rn is a blob the store wrote (rn.py:14), none invented
    blob_rns = {r["meta"]["rn"] for p in run.platforms for r in p.written}
    assert {r["rn"] for r in active} <= blob_rns


def test_the_blob_tree_lands_only_reactions(replayed: tuple[Replay, str], warehouses: dict[str, Path]):
    """93 of 136 blobs were quarantined with their whole text: now every other blob is skipped and counted,
    and neither its text nor its path is stored."""
    run, _ = replayed
    db = warehouses["blobs"]
    (manifest,) = _rows(db, "select * from raw.load_manifest where target_table = 'turn_reactions'")
    assert manifest["rows_read"] == run.blobs
    assert manifest["rows_skipped"] == run.blobs - run.reaction_blobs
    assert manifest["rows_loaded"] + manifest["rows_duplicate"] == run.reaction_blobs
    assert manifest["rows_quarantined"] == 0
    assert _rows(db, "select count(*) as n from raw.quarantine") == [{"n": 0}]
    questions = [r for p in run.platforms for r in p.written if r["role"] == "user"]
    with duckdb.connect(str(db), read_only=True) as con:
        for table in ("turn_reactions", "quarantine", "load_manifest"):
            dump = str(con.execute(f"select * from raw.{table}").fetchall())
            assert not any(q["text"] in dump for q in questions)
            assert "/user-" not in dump and "-turn.log.json" not in dump


def test_before_the_first_check_of_the_index_the_blobs_decide(
    replayed: tuple[Replay, str], warehouses: dict[str, Path], tmp_path: Path
):
    """Built as of the replay's end, before the index was ever checked: nothing says yet that a reaction only
    the blobs hold was gone, so the warehouse with both parts shows what the blobs alone showed then, and adding
    the index does not rewrite a past report."""
    run, _ = replayed
    as_of = run.end.isoformat() + "Z"

    def rebuild(kind: str) -> Path:
        db = tmp_path / f"{kind}.duckdb"
        db.write_bytes(warehouses[kind].read_bytes())
        work = tmp_path / kind
        work.mkdir()
        _build(db, work, as_of)
        return db

    results = {kind: _summary(db) for kind, db in _each(("both", "blobs"), rebuild).items()}
    assert results["both"] == results["blobs"] != _oracle(run)
