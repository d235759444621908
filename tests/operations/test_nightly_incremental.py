"""Incremental models: nights of new data, a purge and an erasure, then the marts equal a --full-refresh build.

The large intermediate steps (int_analyzer__events_landed, int_reactions__sequenced) keep what earlier builds
computed and add only what new loads brought; their pre-hook deletes what a purge or an erasure changed. Real
processes throughout (`python -m cli` demo-data, ingest, purge, forget, build) on a small demo data set plus
hand-made reaction sequences that the nights extend, a purge splits and an erasure removes or rewrites.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.support.ingest import append_jsonl, reaction_envelope, reaction_payload, write_jsonl
from tests.support.operations import ok, ops_env, run_ops
from tests.support.spark_parity import differences, held_rows_not_in

pytestmark = pytest.mark.slow

START = dt.date(2026, 11, 1)  # the demo history ends here; each night adds the next day
ERASED = "erase-me-7f3a"
NO_TESTS = ("--", "--exclude", "resource_type:test")  # the last night's build runs the data tests
INCREMENTAL = {
    "int_analyzer__events_landed": "event_id",
    "int_reactions__unified": "reaction_rn",
    "int_reactions__sequenced": "reaction_rn",
}


def reaction(n: int, at: dt.datetime, *, turn: str, user: str, text: str = "") -> dict:
    """A user reaction on conversation `sequence-conversation`, turn `turn`, given at `at`."""
    payload = reaction_payload(n, ts=at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), turn_id=turn, text=text or f"comment {n}")
    payload["conversation_id"] = "sequence-conversation"
    payload["meta"]["turn_id"] = turn
    payload["meta"]["rn"] = f"ef:tenant-a:proj-x:sequence-conversation:{turn}:artifact:seq-{n}"
    return reaction_envelope(payload, user_id=user)


def night(day: int) -> dt.datetime:
    return dt.datetime.combine(START + dt.timedelta(days=day), dt.time(9))


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A warehouse after four nightly builds (new demo days, an appended reactions export, a purge, an erasure),
    and a copy of it rebuilt with --full-refresh: (nightly, full refresh)."""
    work = tmp_path_factory.mktemp("incremental")
    env = ops_env(work)
    db = work / "nightly.duckdb"

    def cli(*args: object) -> None:
        cut = args.index("--") if "--" in args else len(args)  # dbt's arguments come last
        ok(run_ops(*args[:cut], "--db", db, *args[cut:], env=env, timeout=900))

    exported = work / "reactions_export.jsonl"
    write_jsonl(
        exported,
        [
            # a sequence that the purge splits (400 days old: past the 365-day policy) and night 1 extends
            reaction(1, night(-400), turn="split", user="keeper"),
            reaction(2, night(-5), turn="split", user="keeper"),
            # the erased user's sequence, and another user's comment naming them (rewritten by forget)
            reaction(3, night(-4), turn="erased", user=ERASED),
            reaction(4, night(-3), turn="erased", user=ERASED),
            reaction(5, night(-3), turn="named", user="keeper", text=f"same as {ERASED} said"),
        ],
    )
    base = work / "demo"
    ok(run_ops("demo-data", base, "--scale", "0.05", "--as-of", START, "-q", env=env))
    cli("ingest", "--config", base / "sources.toml", "-q")
    cli("ingest", "reactions", exported, "-q")
    cli("build", "--as-of", START, *NO_TESTS)
    for day in (1, 2, 3):
        as_of = START + dt.timedelta(days=day)
        new_day = work / f"day-{day}"
        ok(run_ops("demo-data", new_day, "--scale", "0.05", "--as-of", as_of, "--days", "1", "--seed", 100 + day,
                   "-q", env=env))  # fmt: skip
        cli("ingest", "--config", new_day / "sources.toml", "-q")
        if day == 1:  # a new reaction in a sequence an earlier night computed
            append_jsonl(exported, [reaction(6, night(1), turn="split", user="keeper")])
            cli("ingest", "reactions", exported, "-q")
        if day == 2:
            cli("purge", "--as-of", as_of, "--yes")
            cli("forget", "--user-id", ERASED, "--no-build")
        cli("build", "--as-of", as_of, *(() if day == 3 else NO_TESTS))
    full = work / "full-refresh.duckdb"
    shutil.copyfile(db, full)
    ok(
        run_ops(
            "build", "--as-of", START + dt.timedelta(days=3), "--db", full, "--", "--full-refresh", env=env, timeout=900
        )
    )
    return db, full


def rows(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_the_nightly_marts_equal_a_full_refresh(nights: tuple[Path, Path]) -> None:
    nightly, full = nights
    assert differences(full, nightly) == {}


def test_the_incremental_tables_equal_a_full_refresh_and_grew_night_by_night(nights: tuple[Path, Path]) -> None:
    """Row for row (every column but held_at, the build that added the row); the nightly file's rows come from
    several builds, the full refresh's from one, so the incremental path did run."""
    nightly, full = nights
    with duckdb.connect() as con:
        con.execute(f"attach '{nightly}' as nightly (read_only)")
        con.execute(f"attach '{full}' as full_refresh (read_only)")
        for table, key in INCREMENTAL.items():
            for one, other in (("nightly", "full_refresh"), ("full_refresh", "nightly")):
                extra = held_rows_not_in(con, one, other, table)
                assert extra == 0, f"{table}: {extra} row(s) of {one} not in {other}"
            (builds,) = con.execute(f"select count(distinct held_at) from nightly.intermediate.{table}").fetchall()[0]
            (once,) = con.execute(f"select count(distinct held_at) from full_refresh.intermediate.{table}").fetchall()[
                0
            ]
            assert builds >= 3 and once == 1, (table, builds, once)
            (total, keys) = con.execute(
                f"select count(*), count(distinct {key}) from nightly.intermediate.{table}"
            ).fetchall()[0]
            assert total == keys > 0


def test_the_purge_split_and_the_new_night_extended_a_sequence(nights: tuple[Path, Path]) -> None:
    """seq-1 (400 days old) was purged: seq-2 has no previous reaction any more, and seq-6 (night 1) follows it."""
    nightly, _ = nights
    found = rows(
        nightly,
        "select reaction_rn, previous_rn, next_rn from intermediate.int_reactions__sequenced "
        "where turn_id = 'split' order by reacted_at",
    )
    rn = "ef:tenant-a:proj-x:sequence-conversation:split:artifact:seq-{}".format
    assert found == [(rn(2), None, rn(6)), (rn(6), rn(2), None)]


@pytest.mark.parametrize("table", ["int_reactions__unified", "int_reactions__sequenced"])
def test_the_erased_user_left_the_incremental_tables(nights: tuple[Path, Path], table: str) -> None:
    """forget deleted the user's reactions and nulled the comment naming them: neither survives in the tables
    that an earlier night had filled."""
    nightly, _ = nights
    assert rows(nightly, f"select count(*) from intermediate.{table} where user_id = '{ERASED}'") == [(0,)]
    assert rows(nightly, f"select comment_text from intermediate.{table} where turn_id = 'named'") == [(None,)]
    assert rows(nightly, f"select count(*) from intermediate.{table} where comment_text like '%{ERASED}%'") == [(0,)]
