"""Incremental models: nights of new data, a purge and an erasure, then the marts equal a --full-refresh build.

The large intermediate steps (int_analyzer__events_landed, int_reactions__sequenced) keep what earlier builds
computed and add only what new loads brought; their pre-hook deletes what a purge or an erasure changed. Real
processes throughout (`python -m cli` demo-data, ingest, purge, forget, build) on a small demo data set plus
hand-made reaction sequences that the nights extend, a purge splits and an erasure removes or rewrites.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.support.ingest import analyzer_event, append_jsonl, reaction_envelope, reaction_payload, write_jsonl
from tests.support.operations import ok, ops_env, run_ops
from tests.support.spark_parity import differences, held_rows_not_in

pytestmark = pytest.mark.slow

START = dt.date(2026, 11, 1)  # the demo history ends here; each night adds the next day
ERASED = "erase-me-7f3a"
PROBE = "changed by hand after the cutoff"
OTHER_THRESHOLD = 0.9  # machine_confidence_threshold other than the default 0.70
NO_TESTS = ("--", "--exclude", "resource_type:test")  # the last night's build runs the data tests
INCREMENTAL = {
    "int_analyzer__events_landed": "event_id",
    "int_reactions__unified": "reaction_rn",
    "int_reactions__sequenced": "reaction_rn",
    "int_reactions__history": "reaction_rn",
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
    and a copy of it rebuilt with --full-refresh: (nightly, full refresh).

    The purge (night 2) and the erasure (night 3) come on different nights: after a purge alone the pre-hooks
    compare only the held rows dated up to its cutoff (delete_changed_rows' dated_by), after an erasure all."""
    work = tmp_path_factory.mktemp("incremental")
    env = ops_env(work)
    db = work / "nightly.duckdb"

    def cli(*args: object, night_env: dict[str, str] = env) -> None:
        cut = args.index("--") if "--" in args else len(args)  # dbt's arguments come last
        ok(run_ops(*args[:cut], "--db", db, *args[cut:], env=night_env, timeout=900))

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
            # a reaction night 3 replaces (seq-8): a build as of night 1 sees it active, one as of night 3 not
            reaction(7, night(0), turn="moved", user="keeper"),
        ],
    )
    # analyzer events on either side of the purge's 365-day cutoff (night 2: 2025-11-03): the older one is
    # deleted, from the archive the 90-day policy moves both to on the same purge
    old_events = write_jsonl(
        work / "old-events.jsonl",
        [
            analyzer_event(1, timestamp=night(-400).strftime("%Y-%m-%dT%H:%M:%SZ")),
            analyzer_event(2, timestamp=night(-300).strftime("%Y-%m-%dT%H:%M:%SZ")),
        ],
    )
    base = work / "demo"
    ok(run_ops("demo-data", base, "--scale", "0.05", "--as-of", START, "-q", env=env))
    cli("ingest", "--config", base / "sources.toml", "-q")
    cli("ingest", "reactions", exported, "-q")
    cli("ingest", "analyzer", old_events, "-q")
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
            # a probe: a raw row after the cutoff changed by hand (outside purge and forget), which a comparison
            # of every held row would find; the purge's comparison does not read it, the erasure's does
            with duckdb.connect(str(db)) as con:
                con.execute(f"update raw.turn_reactions set text = '{PROBE}' where rn like '%:seq-2'")
        if day == 3:
            append_jsonl(exported, [reaction(8, night(3), turn="moved", user="keeper")])
            cli("ingest", "reactions", exported, "-q")
            cli("forget", "--user-id", ERASED, "--no-build")
        # the SQL this night's build ran (dbt's file log is at debug level), in a log folder of its own
        cli("build", "--as-of", as_of, *(() if day == 3 else NO_TESTS),
            night_env={**env, "DBT_LOG_PATH": str(work / f"night-{day}-logs")})  # fmt: skip
        if day == 2:
            (work / "after-night-2.json").write_text(json.dumps(held_after_night_2(db)))
    full = work / "full-refresh.duckdb"
    shutil.copyfile(db, full)
    ok(
        run_ops(
            "build", "--as-of", START + dt.timedelta(days=3), "--db", full, "--", "--full-refresh", env=env, timeout=900
        )
    )
    return db, full


@pytest.fixture(scope="module")
def moved(nights: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The nightly warehouse built again as of night 1 (as_of moved back two days: the reactions given since leave
    the history, and the earlier ones see no next reaction given since), beside a --full-refresh build of a copy
    as of night 1; then that warehouse built as of night 3 again (moved forward), and, on another copy, as of
    night 1 with another machine_confidence_threshold."""
    nightly, _ = nights
    work = tmp_path_factory.mktemp("moved")
    env = ops_env(work)
    back, back_full, forth, threshold = (
        work / f"{name}.duckdb" for name in ("back", "back-full", "forth", "threshold")
    )
    night_1, night_3 = (START + dt.timedelta(days=day) for day in (1, 3))
    shutil.copyfile(nightly, back)
    ok(run_ops("build", "--as-of", night_1, "--db", back, *NO_TESTS, env=env, timeout=900))
    for copy in (back_full, forth, threshold):
        shutil.copyfile(back, copy)
    ok(run_ops("build", "--as-of", night_1, "--db", back_full, "--", "--full-refresh", env=env, timeout=900))
    ok(run_ops("build", "--as-of", night_3, "--db", forth, *NO_TESTS, env=env, timeout=900))
    other = json.dumps({"machine_confidence_threshold": OTHER_THRESHOLD})
    ok(run_ops("build", "--as-of", night_1, "--db", threshold, *NO_TESTS, "--vars", other, env=env, timeout=900))
    return {"back": back, "back_full": back_full, "forth": forth, "threshold": threshold}


def held_after_night_2(db: Path) -> dict[str, list]:
    """What the incremental tables hold of the purged rows and of the probe right after the purge night."""
    old_event = analyzer_event(1)["event_id"]
    return {
        "purged reaction": rows(
            db,
            "select 'unified', count(*) from intermediate.int_reactions__unified where reaction_rn like '%:seq-1' "
            "union all select 'sequenced', count(*) from intermediate.int_reactions__sequenced "
            "where reaction_rn like '%:seq-1' union all select 'history', count(*) "
            "from intermediate.int_reactions__history where reaction_rn like '%:seq-1' order by 1",
        ),
        "purged event": rows(
            db, f"select count(*) from intermediate.int_analyzer__events_landed where event_id = '{old_event}'"
        ),
        "probe": rows(
            db, "select comment_text from intermediate.int_reactions__unified where reaction_rn like '%:seq-2'"
        ),
    }


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


def test_the_purge_deleted_the_old_analyzer_event_and_kept_the_archived_one(nights: tuple[Path, Path]) -> None:
    """Night 2's purge deleted the event dated past its 365-day cutoff (from the archive the 90-day policy moved
    it to) and archived the other: the incremental table, which held both, holds only the younger one."""
    nightly, _ = nights
    old, kept = (analyzer_event(n)["event_id"] for n in (1, 2))
    held = rows(
        nightly, f"select event_id from intermediate.int_analyzer__events_landed where event_id in ('{old}', '{kept}')"
    )
    assert held == [(kept,)]


def test_the_purge_night_removed_what_it_purged_and_compared_nothing_after_its_cutoff(
    nights: tuple[Path, Path],
) -> None:
    """Right after night 2 (a purge alone): the reaction and the event past its cutoff were gone from every
    incremental table, while the probe, a raw row dated after the cutoff changed by hand, was not compared (a
    comparison of every row would have taken its new text). Night 3's erasure compared every row and took it:
    the tables then equal a full refresh (above)."""
    nightly, _ = nights
    after = json.loads((nightly.parent / "after-night-2.json").read_text())
    assert after["purged reaction"] == [["history", 0], ["sequenced", 0], ["unified", 0]]
    assert after["purged event"] == [[0]]
    assert after["probe"] == [["comment 2"]]
    assert rows(
        nightly, "select comment_text from intermediate.int_reactions__unified where reaction_rn like '%:seq-2'"
    ) == [(PROBE,)]


@pytest.mark.parametrize("table", ["int_analyzer__events_landed", "int_reactions__unified", "int_reactions__sequenced"])
def test_after_a_purge_alone_only_rows_up_to_its_cutoff_were_compared(nights: tuple[Path, Path], table: str) -> None:
    """Night 2 (a purge, cutoff 2025-11-03 for the reactions, 2026-08-05 for the 90-day analyzer archive) compared
    only the held rows dated up to the latest cutoff of the purges of the model's source, on both sides; night 3
    (an erasure) compared every held row. Read from the SQL each night's build logged."""
    nightly, _ = nights
    cutoff = {"int_analyzer__events_landed": "2026-08-05"}.get(table, "2025-11-03")
    restricted = f"<= cast('{cutoff}' as date)"
    hooks = {}
    for day in (2, 3):
        log = (nightly.parent / f"night-{day}-logs" / "dbt.log").read_text(errors="replace")
        entries = re.split(r"\n(?=\d\d:\d\d:\d\d\.\d+ \[)", log)  # one per logged line, SQL included
        hooks[day] = [e for e in entries if f"On model.feedback_analytics.{table}:" in e and "delete from" in e]
        assert hooks[day], f"night {day}: no pre-hook of {table} in the log"
    assert any(hook.count(restricted) == 2 for hook in hooks[2]), hooks[2]  # the held rows and the source's
    assert not any("<= cast('" in hook for hook in hooks[3]), hooks[3]


@pytest.mark.parametrize("table", ["int_reactions__unified", "int_reactions__sequenced"])
def test_the_erased_user_left_the_incremental_tables(nights: tuple[Path, Path], table: str) -> None:
    """forget deleted the user's reactions and nulled the comment naming them: neither survives in the tables
    that an earlier night had filled."""
    nightly, _ = nights
    assert rows(nightly, f"select count(*) from intermediate.{table} where user_id = '{ERASED}'") == [(0,)]
    assert rows(nightly, f"select comment_text from intermediate.{table} where turn_id = 'named'") == [(None,)]
    assert rows(nightly, f"select count(*) from intermediate.{table} where comment_text like '%{ERASED}%'") == [(0,)]


@pytest.mark.parametrize(("built", "refreshed"), [("back", "back_full"), ("forth", None)])
def test_the_history_follows_the_as_of_back_and_forth(
    nights: tuple[Path, Path], moved: dict[str, Path], built: str, refreshed: str | None
) -> None:
    """The incremental history built as of an earlier day equals a full refresh as of that day; built forward
    again, it equals the nights' full refresh. The move did change held rows (reactions given after night 1,
    earlier ones whose next reaction came after it), so neither comparison is between two unchanged tables."""
    _, full = nights
    with duckdb.connect() as con:
        con.execute(f"attach '{moved[built]}' as incremental (read_only)")
        con.execute(f"attach '{moved[refreshed] if refreshed else full}' as full_refresh (read_only)")
        for one, other in (("incremental", "full_refresh"), ("full_refresh", "incremental")):
            extra = held_rows_not_in(con, one, other, "int_reactions__history")
            assert extra == 0, f"{extra} history row(s) of {one} not in {other}"
        # rows kept from the build before (its as_of), beside the ones this build computed: it was incremental
        (instants,) = con.execute(
            "select count(distinct held_as_of) from incremental.intermediate.int_reactions__history"
        ).fetchall()[0]
        assert instants >= 2, instants
        if refreshed:
            con.execute(f"attach '{full}' as nights_end (read_only)")
            (given_since, replaced_since) = con.execute(
                "select count(*) filter (where back.reaction_rn is null), "
                "count(*) filter (where later.replaced_by_rn is not null and back.reaction_rn is not null "
                "and back.replaced_by_rn is null) "
                "from nights_end.intermediate.int_reactions__history as later "
                "left join incremental.intermediate.int_reactions__history as back using (reaction_rn)"
            ).fetchall()[0]
            assert given_since > 0 and replaced_since > 0, (given_since, replaced_since)


def test_another_machine_threshold_computes_the_machine_reactions_again(moved: dict[str, Path]) -> None:
    """Built again with machine_confidence_threshold 0.9 (default 0.70): a machine reaction the blobs decide is
    active exactly when its confidence reaches 0.9 (docs/metrics.md), also the ones held from the build before,
    and some changed."""
    with duckdb.connect() as con:
        con.execute(f"attach '{moved['threshold']}' as threshold (read_only)")
        con.execute(f"attach '{moved['back']}' as before (read_only)")
        (wrong, changed, machine) = con.execute(
            "select count(*) filter (where now.is_active is distinct from coalesce(now.confidence >= ?, false)), "
            "count(*) filter (where now.is_active <> before.is_active), count(*) "
            "from threshold.intermediate.int_reactions__history as now "
            "join before.intermediate.int_reactions__history as before using (reaction_rn) "
            "where now.origin = 'machine' and now.active_part = 'blobs'",
            [OTHER_THRESHOLD],
        ).fetchall()[0]
    assert machine > 0 and changed > 0 and wrong == 0, (machine, changed, wrong)
