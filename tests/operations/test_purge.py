"""`purge`: the retention policies of the seed applied to the raw tables, run as the operator runs it.

One module-scoped warehouse holds, for every policy, a row exactly on the cutoff day, one a day before and
one a day after (at the edges of those days), plus golden sessions of every age. It is purged with the real
CLI in subprocesses: a dry run, a run, then the same run again. Other tests build their own small
warehouses: the archive round trip, where the archive goes, deletion from the archive after 365 days; the
kill test SIGKILLs purges of a few hundred thousand rows.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pytest

from demo import write_analyzer_jsonl
from tests.support.ingest import append_jsonl, ingest_ok, kill_at, parse_report, snapshot
from tests.support.operations import (
    AS_OF,
    DATA_TABLES,
    POLICIES,
    POLICY_TABLES,
    archive_listing,
    archived_event_ids,
    at,
    cli_command,
    cutoff,
    days,
    eval_run_on,
    event_on,
    feedback_on,
    first_moment,
    golden_on,
    ids,
    last_moment,
    ok,
    ops_env,
    parquet_files,
    parse_purge,
    purge_log,
    reaction_on,
    read_archive,
    read_only,
    replay_on,
    run_ops,
    session_on,
    write_bulk_sessions,
    write_sources,
)

S = cutoff("session_feedback")  # 2026-05-05
A = cutoff("analyzer_events_archive")  # 2026-08-03
D = cutoff("analyzer_events")  # 2025-11-01
Y = cutoff("turn_reactions")  # 365 days: reactions, workspace feedback, replays, eval runs
ANALYZER_COLUMNS = (
    "event_id, timestamp, session_id, skill_id, invocation_uuid, outcome, confidence, correction_type, "
    "user_message_snippet, turns_to_feedback, ai_tools_used, dimension_hint"
)


def edges(prefix: str, cut: dt.date) -> dict[str, str]:
    """name -> moment: the last instant of the day before the cutoff, the first of the cutoff day, the day after."""
    return {
        f"{prefix}-before": last_moment(cut - days(1)),
        f"{prefix}-at": first_moment(cut),
        f"{prefix}-after": at(cut + days(1)),
    }


RICH_EVENTS = [  # archived, and must come back from the archive exactly as they were
    event_on(
        "rich-unicode",
        "2026-07-01T12:34:56.123456Z",
        user_message_snippet='naïve café ☕ — "quoted", back\\slash, newline\nend',
        ai_tools_used=["Read", "Edit", "Bash"],
    ),
    event_on(
        "rich-nulls",
        "2026-06-15T00:00:00.000001Z",
        session_id=None,
        invocation_uuid=None,
        confidence=None,
        correction_type=None,
        user_message_snippet=None,
        turns_to_feedback=None,
        ai_tools_used=[],
        dimension_hint=None,
    ),
    event_on("rich-no-tools", "2026-05-20T08:00:00Z", ai_tools_used=None, outcome="acceptance"),
]


def boundary_sources(folder: Path) -> Path:
    analyzer = [event_on(name, moment) for name, moment in {**edges("arch", A), **edges("del", D)}.items()]
    analyzer += [event_on("ev-recent", at(AS_OF - days(1))), event_on("ev-future", at(AS_OF + days(2)))]
    sessions = [session_on(name, moment) for name, moment in edges("sf", S).items()]
    sessions += [
        # upstream's recorded_date decides, not the UTC date of recorded_at
        session_on("sf-date-before", at(S, "01:00:00"), recorded_date=(S - days(1)).isoformat()),
        session_on("sf-date-at", at(S - days(1), "23:00:00"), recorded_date=S.isoformat()),
        session_on("sf-recent", at(AS_OF - days(1))),
    ]
    workspace_sessions = [replay_on(name, moment) for name, moment in edges("rp", Y).items()]
    workspace_sessions += [
        golden_on("gold-ancient", at(AS_OF - days(1500))),
        golden_on("gold-before", last_moment(Y - days(1))),
        golden_on("gold-promoted-replay", at(AS_OF - days(800)), also_replay_of="gold-ancient"),
        golden_on("gold-recent", at(AS_OF - days(3))),
        replay_on("rp-recent", at(AS_OF - days(1))),
    ]
    return write_sources(
        folder,
        analyzer=analyzer + RICH_EVENTS,
        sessions=sessions,
        reactions=[reaction_on(name, moment) for name, moment in edges("rx", Y).items()],
        feedback=[feedback_on(name, moment) for name, moment in edges("wf", Y).items()],
        workspace_sessions=workspace_sessions,
        eval_runs=[eval_run_on(name, moment) for name, moment in edges("er", Y).items()],
    )


def event_names(db: Path) -> set[str]:
    """Analyzer events in the table, by the name they were built with (their session_id; rich-nulls has none)."""
    con = read_only(db)
    try:
        return {row[0] or "rich-nulls" for row in con.execute("select session_id from raw.analyzer_events").fetchall()}
    finally:
        con.close()


def archived_names(folder: Path) -> list[str]:
    if not parquet_files(folder):
        return []
    return [row[0] or "rich-nulls" for row in read_archive(folder, "select session_id from archive")]


def file_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in archive_listing(folder)}


@dataclass
class Boundary:
    db: Path
    archive: Path
    originals: dict[str, list[tuple[Any, ...]]]
    dry: subprocess.CompletedProcess[str]
    after_dry: dict[str, list[tuple[Any, ...]]]
    file_changed_by_dry_run: bool
    first: subprocess.CompletedProcess[str]
    after_first: dict[str, list[tuple[Any, ...]]]
    archive_after_first: dict[str, bytes]
    log_after_first: list[dict[str, Any]]
    second: subprocess.CompletedProcess[str]
    after_second: dict[str, list[tuple[Any, ...]]]
    archive_after_second: dict[str, bytes]
    log_after_second: list[dict[str, Any]]


@pytest.fixture(scope="module")
def boundary(tmp_path_factory: pytest.TempPathFactory) -> Boundary:
    work = tmp_path_factory.mktemp("purge-boundary")
    db, archive = work / "warehouse.duckdb", work / "archive"
    ingest_ok("--config", boundary_sources(work / "sources"), "--db", db, "-q")
    env = ops_env(work)
    # the boundary data is small: several policies remove more than half of their table
    purge = ("purge", "--as-of", AS_OF, "--archive-dir", archive, "--db", db, "--yes")
    originals = snapshot(db, DATA_TABLES)
    bytes_before = db.read_bytes()
    dry = ok(run_ops(*purge, "--dry-run", env=env))
    file_changed_by_dry_run = db.read_bytes() != bytes_before or db.with_name(db.name + ".wal").exists()
    after_dry = snapshot(db, DATA_TABLES)
    first = ok(run_ops(*purge, env=env))
    after_first, archive_after_first, log_after_first = snapshot(db, DATA_TABLES), file_bytes(archive), purge_log(db)
    second = ok(run_ops(*purge, env=env))
    return Boundary(
        db=db,
        archive=archive,
        originals=originals,
        dry=dry,
        after_dry=after_dry,
        file_changed_by_dry_run=file_changed_by_dry_run,
        first=first,
        after_first=after_first,
        archive_after_first=archive_after_first,
        log_after_first=log_after_first,
        second=second,
        after_second=snapshot(db, DATA_TABLES),
        archive_after_second=file_bytes(archive),
        log_after_second=purge_log(db),
    )


# -- boundaries, one policy at a time ---------------------------------------------------------------------
DELETE_POLICIES = {  # policy -> (raw table, key column, name prefix of its boundary rows)
    "session_feedback": ("session_feedback", "id", "sf"),
    "turn_reactions": ("turn_reactions", "rn", "rx"),
    "workspace_feedback": ("workspace_feedback", "id", "wf"),
    "replay_sessions": ("workspace_sessions", "id", "rp"),
    "eval_runs": ("workspace_eval_runs", "id", "er"),
}


@pytest.mark.parametrize("policy", sorted(DELETE_POLICIES))
def test_delete_policy_boundaries(boundary: Boundary, policy: str) -> None:
    table, key, prefix = DELETE_POLICIES[policy]
    left = ids(boundary.db, table, key)
    assert f"{prefix}-before" not in left, f"{policy}: a row dated the day before the cutoff survived"
    assert f"{prefix}-at" in left, f"{policy}: a row dated on the cutoff day was purged (the cutoff is strict)"
    assert f"{prefix}-after" in left, f"{policy}: a row dated the day after the cutoff was purged"
    # session feedback: sf-before and sf-date-before (see the next test)
    assert parse_purge(boundary.first.stdout)[policy].deleted == (2 if policy == "session_feedback" else 1)


def test_session_feedback_goes_by_recorded_date(boundary: Boundary) -> None:
    left = ids(boundary.db, "session_feedback")
    assert "sf-date-before" not in left, "recorded_date before the cutoff (recorded_at on it): must be purged"
    assert "sf-date-at" in left, "recorded_date on the cutoff (recorded_at the day before): must stay"
    assert "sf-recent" in left
    assert parse_purge(boundary.first.stdout)["session_feedback"].deleted == 2


def test_analyzer_archive_boundary(boundary: Boundary) -> None:
    in_table, in_archive = event_names(boundary.db), archived_names(boundary.archive)
    assert "arch-before" not in in_table and "arch-before" in in_archive, "day before the 90-day cutoff: archived"
    assert {"arch-at", "arch-after", "ev-recent", "ev-future"} <= in_table, "on/after the 90-day cutoff: stays"
    assert not {"arch-at", "arch-after", "ev-recent", "ev-future"} & set(in_archive)
    line = parse_purge(boundary.first.stdout)["analyzer_events_archive"]
    # arch-before, the three rich events and the three events around the 365-day cutoff
    assert line.archived == 7
    assert line.archive_uri and Path(line.archive_uri).is_file()


def test_analyzer_deleted_from_the_archive_after_365_days(boundary: Boundary) -> None:
    in_table, in_archive = event_names(boundary.db), archived_names(boundary.archive)
    assert "del-before" not in in_table and "del-before" not in in_archive, "older than 365 days: gone everywhere"
    assert {"del-at", "del-after"} <= set(in_archive), "on/after the 365-day cutoff: kept in the archive"
    # the archive policy runs first and moves it to the archive; the 365-day policy then deletes it from there
    line = parse_purge(boundary.first.stdout)["analyzer_events"]
    assert (line.deleted, line.deleted_from_archive) == (0, 1)


def test_golden_sessions_are_never_purged(boundary: Boundary) -> None:
    left = ids(boundary.db, "workspace_sessions")
    golden = {"gold-ancient", "gold-before", "gold-promoted-replay", "gold-recent"}
    assert golden <= left, f"golden sessions purged: {sorted(golden - left)}"
    line = parse_purge(boundary.first.stdout)["golden_sessions"]
    assert (line.cutoff, line.archived, line.deleted) == (None, 0, 0)
    assert {"rp-at", "rp-after", "rp-recent"} <= left


def test_nothing_else_is_touched(boundary: Boundary) -> None:
    """Apart from the rows past a cutoff, every row of every table is exactly as it was."""
    gone = {"sf-before", "sf-date-before", "rx-before", "wf-before", "rp-before", "er-before"}
    for table in DATA_TABLES:
        if table == "analyzer_events":
            continue
        expected = [row for row in boundary.originals[table] if not set(map(str, row)) & gone]
        assert boundary.after_first[table] == expected, table
    kept_events = [r for r in boundary.originals["analyzer_events"] if r[1] >= dt.datetime.combine(A, dt.time())]
    assert boundary.after_first["analyzer_events"] == kept_events


# -- output, log, dry run, idempotency ------------------------------------------------------------------------
def test_run_prints_one_line_per_policy_and_logs_it(boundary: Boundary) -> None:
    printed = parse_purge(boundary.first.stdout)
    assert sorted(printed) == sorted(POLICIES), boundary.first.stdout
    log = [row for row in boundary.log_after_first if not row["is_dry_run"]]
    assert sorted(row["policy"] for row in log) == sorted(POLICIES)
    assert len({row["purge_id"] for row in log}) == 1, "one purge id for the run"
    for row in log:
        line = printed[row["policy"]]
        assert row["table_name"].removeprefix("raw.") == POLICY_TABLES[row["policy"]]
        logged = (row["rows_archived"], row["rows_deleted"], row["rows_deleted_from_archive"])
        assert logged == (line.archived, line.deleted, line.deleted_from_archive), row
        expected_cutoff = None if line.cutoff is None else dt.datetime.combine(line.cutoff, dt.time())
        assert row["cutoff"] == expected_cutoff
        assert row["archive_uri"] == line.archive_uri
    assert printed["session_feedback"].cutoff == S
    assert printed["analyzer_events_archive"].cutoff == A
    assert printed["analyzer_events"].cutoff == D
    for policy in ("turn_reactions", "workspace_feedback", "replay_sessions", "eval_runs"):
        assert printed[policy].cutoff == Y, policy


def test_dry_run_prints_what_a_run_would_do_and_changes_nothing(boundary: Boundary) -> None:
    would, did = parse_purge(boundary.dry.stdout), parse_purge(boundary.first.stdout)
    assert sorted(would) == sorted(POLICIES), boundary.dry.stdout
    for policy in POLICIES:
        assert would[policy].dry_run
        counts = ("archived", "deleted", "deleted_from_archive")
        assert [getattr(would[policy], c) for c in counts] == [getattr(did[policy], c) for c in counts], policy
        assert would[policy].archive_uri is None
    assert boundary.after_dry == boundary.originals, "a dry run changed raw data"
    assert not boundary.file_changed_by_dry_run, "a dry run changed the warehouse file's bytes"
    assert not [row for row in boundary.log_after_first if row["is_dry_run"]], "a dry run wrote to purge_log"
    # the only archive file is the real run's
    assert list(boundary.archive_after_first) == [did["analyzer_events_archive"].archive_uri]


def test_second_run_removes_nothing(boundary: Boundary) -> None:
    again = parse_purge(boundary.second.stdout)
    assert sorted(again) == sorted(POLICIES)
    assert all(
        (line.archived, line.deleted, line.deleted_from_archive, line.archive_uri) == (0, 0, 0, None)
        for line in again.values()
    ), again
    assert boundary.after_second == boundary.after_first
    assert boundary.archive_after_second == boundary.archive_after_first, "the archive changed on the second run"
    new_rows = boundary.log_after_second[len(boundary.log_after_first) :]
    assert sorted(row["policy"] for row in new_rows) == sorted(POLICIES), "every real run writes its log rows"
    assert all(row["rows_archived"] == row["rows_deleted"] == row["rows_deleted_from_archive"] == 0 for row in new_rows)


# -- the archive ---------------------------------------------------------------------------------------------------
def test_archive_round_trip(boundary: Boundary, tmp_path: Path) -> None:
    """Purged events read back from the archive (DuckDB directly, and `ingest analyzer DIR`) equal the originals."""
    cut = dt.datetime.combine(A, dt.time())
    deleted = dt.datetime.combine(D, dt.time())
    expected = sorted(
        (r for r in boundary.originals["analyzer_events"] if deleted <= r[1] < cut),
        key=repr,
    )
    assert len(expected) == 6
    # DuckDB directly: every column, lineage included, unchanged
    direct = sorted(read_archive(boundary.archive), key=repr)
    assert direct == expected

    # `ingest analyzer DIR` into another warehouse: the same events, field by field
    fresh = tmp_path / "restored.duckdb"
    report = ingest_ok("analyzer", boundary.archive, "--db", fresh)
    loads, _skipped, totals = parse_report(report.stdout)
    assert totals == {"read": 6, "loaded": 6, "quarantined": 0, "duplicates": 0}, report.stdout
    con = read_only(fresh)
    try:
        restored = sorted(con.execute(f"select {ANALYZER_COLUMNS} from raw.analyzer_events").fetchall(), key=repr)
    finally:
        con.close()
    width = len(ANALYZER_COLUMNS.split(","))
    assert restored == sorted((row[:width] for row in expected), key=repr)


def test_archive_defaults_beside_the_warehouse_and_is_configurable(tmp_path: Path) -> None:
    config = write_sources(tmp_path / "src", analyzer=[event_on("old", at(A - days(10)))])
    env = ops_env(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    default_db = tmp_path / "wh" / "default.duckdb"
    default_db.parent.mkdir()
    ingest_ok("--config", config, "--db", default_db, "-q")
    # run from another folder: the archive still goes beside the warehouse, not into the working directory
    line = parse_purge(ok(run_ops("purge", "--as-of", AS_OF, "--db", default_db, env=env, cwd=elsewhere)).stdout)
    uri = Path(line["analyzer_events_archive"].archive_uri)
    assert uri.is_file() and uri.suffix == ".parquet"
    assert uri.resolve().is_relative_to(default_db.parent.resolve()), uri
    assert "archive" in uri.parent.relative_to(default_db.parent.resolve()).as_posix(), uri
    assert not list(elsewhere.iterdir())

    env_db, env_dir = tmp_path / "env.duckdb", tmp_path / "from-env"
    ingest_ok("--config", config, "--db", env_db, "-q")
    env_line = parse_purge(
        ok(run_ops("purge", "--as-of", AS_OF, "--db", env_db, env={**env, "FEEDBACK_ARCHIVE_DIR": str(env_dir)})).stdout
    )
    assert Path(env_line["analyzer_events_archive"].archive_uri).parent == env_dir

    opt_db, opt_dir = tmp_path / "opt.duckdb", tmp_path / "from-option"
    ingest_ok("--config", config, "--db", opt_db, "-q")
    opt_line = parse_purge(
        ok(run_ops("purge", "--as-of", AS_OF, "--db", opt_db, "--archive-dir", opt_dir, env=env)).stdout
    )
    assert Path(opt_line["analyzer_events_archive"].archive_uri).parent == opt_dir
    for folder in (env_dir, opt_dir):
        assert archived_event_ids(folder) == [event_on("old", "x")["event_id"]]


def test_archived_events_are_deleted_from_the_archive_after_365_days(tmp_path: Path) -> None:
    """A later purge rewrites an older archive file without its expired events and keeps the rest."""
    first_day, later_day = AS_OF - days(200), AS_OF  # a future as-of is refused: the first run lies in the past
    cut = cutoff("analyzer_events", later_day)  # 165 days before first_day: archived by the first run
    moments = edges("late", cut)
    config = write_sources(
        tmp_path / "src",
        analyzer=[event_on(name, moment) for name, moment in moments.items()] + [event_on("fresh", at(later_day))],
    )
    db, archive, env = tmp_path / "w.duckdb", tmp_path / "archive", ops_env(tmp_path)
    ingest_ok("--config", config, "--db", db, "-q")
    first = parse_purge(
        ok(run_ops("purge", "--as-of", first_day, "--archive-dir", archive, "--db", db, env=env)).stdout
    )
    assert first["analyzer_events_archive"].archived == 3
    assert sorted(archived_names(archive)) == sorted(moments)

    later = parse_purge(
        ok(run_ops("purge", "--as-of", later_day, "--archive-dir", archive, "--db", db, env=env)).stdout
    )
    assert (later["analyzer_events"].deleted, later["analyzer_events"].deleted_from_archive) == (0, 1)
    assert sorted(archived_names(archive)) == ["late-after", "late-at"]
    logged = {row["archive_uri"] for row in purge_log(db) if row["archive_uri"]}
    assert {str(p) for p in archive_listing(archive)} <= logged, "a file in the archive that no log row names"


def test_archive_survives_a_purge_that_names_its_folder_differently(tmp_path: Path) -> None:
    """The same archive folder given as a relative path once and as an absolute path later: nothing archived is lost."""
    config = write_sources(
        tmp_path / "src",
        analyzer=[event_on("first", at(A - days(40))), event_on("second", at(A + days(5)))],
    )
    db, env = tmp_path / "w.duckdb", ops_env(tmp_path)
    ingest_ok("--config", config, "--db", db, "-q")
    ok(run_ops("purge", "--as-of", AS_OF, "--archive-dir", "archive", "--db", db, env=env, cwd=tmp_path))
    assert sorted(archived_names(tmp_path / "archive")) == ["first"]
    ok(run_ops("purge", "--as-of", AS_OF + days(10), "--archive-dir", tmp_path / "archive", "--db", db, env=env))
    assert sorted(archived_names(tmp_path / "archive")) == ["first", "second"], "an archived event was lost"


def test_reingesting_a_grown_source_after_a_purge_keeps_each_event_once(tmp_path: Path) -> None:
    """The nightly cycle: the analyzer's active file grows, is ingested again, purged again.

    Events already archived must not come back into the table and be archived a second time.
    """
    old = [event_on(f"old-{i}", at(A - days(10 + i))) for i in range(5)]
    config = write_sources(tmp_path / "src", analyzer=old)
    db, archive, env = tmp_path / "w.duckdb", tmp_path / "archive", ops_env(tmp_path)
    purge = ("purge", "--as-of", AS_OF, "--archive-dir", archive, "--db", db)
    ingest_ok("--config", config, "--db", db, "-q")
    ok(run_ops(*purge, env=env))
    append_jsonl(tmp_path / "src" / "analyzer" / "feedback.jsonl", [event_on("new", at(AS_OF - days(1)))])
    ingest_ok("--config", config, "--db", db, "-q")
    ok(run_ops(*purge, env=env))
    everywhere = sorted(archived_names(archive)) + sorted(event_names(db))
    assert sorted(everywhere) == sorted([f"old-{i}" for i in range(5)] + ["new"]), (
        "table + archive should hold each event exactly once"
    )


# -- killed purges ------------------------------------------------------------------------------------------
# No race to win: the purge stops itself at a named point (warehouse/pause_points.py) and is killed there.
KILL_EVENTS = 60_000
KILL_SESSIONS = 20_000


@dataclass(frozen=True)
class KillPoint:
    point: str
    sessions_purged: bool  # the session_feedback policy (the seed's first) committed before the kill
    events_archived: bool  # the analyzer archive policy committed before the kill
    leftover: str | None  # what the archive folder holds right after the kill: a "tmp" or a "parquet" file, or nothing


# In the seed's order, session_feedback is purged first, then the analyzer archive policy.
KILL_POINTS = [
    KillPoint("purge-rows-deleted", sessions_purged=False, events_archived=False, leftover=None),
    KillPoint("purge-committed:session_feedback", sessions_purged=True, events_archived=False, leftover=None),
    KillPoint("purge-archive-written", sessions_purged=True, events_archived=False, leftover="tmp"),
    KillPoint("purge-archive-renamed", sessions_purged=True, events_archived=False, leftover="parquet"),
    KillPoint(
        "purge-committed:analyzer_events_archive", sessions_purged=True, events_archived=True, leftover="parquet"
    ),
]


def _expired_counts(db: Path) -> tuple[int, int, int, int]:
    """(expired analyzer events, kept events, expired sessions, kept sessions)."""
    con = read_only(db)
    try:
        return con.execute(
            """
            select
                (select count(*) from raw.analyzer_events where cast("timestamp" as date) < ?),
                (select count(*) from raw.analyzer_events where cast("timestamp" as date) >= ?),
                (select count(*) from raw.session_feedback where recorded_date < ?),
                (select count(*) from raw.session_feedback where recorded_date >= ?)
            """,
            [A, A, S, S],
        ).fetchone()
    finally:
        con.close()


def _assert_each_event_once(db: Path, base: Path, archive: Path, expected_total: int) -> None:
    """Table + archive hold exactly the original events, each once, every column unchanged."""
    files = parquet_files(archive)
    con = duckdb.connect()
    try:
        con.execute("set TimeZone = 'UTC'")
        con.execute(f"attach '{db}' as w (read_only)")
        con.execute(f"attach '{base}' as b (read_only)")
        listing = ", ".join(f"'{f}'" for f in files)
        archived = (
            f"select * from read_parquet([{listing}])" if files else "select * from w.raw.analyzer_events limit 0"
        )
        con.execute(f"create temp view combined as select * from w.raw.analyzer_events union all by name {archived}")
        total, distinct = con.execute("select count(*), count(distinct event_id) from combined").fetchone()
        assert (total, distinct) == (expected_total, expected_total), (
            f"table + archive hold {total} events ({distinct} distinct), expected {expected_total} once each"
        )
        (missing,) = con.execute(
            "select count(*) from (select * from b.raw.analyzer_events except all select * from combined)"
        ).fetchone()
        assert missing == 0, f"{missing} original events are not in the table or the archive unchanged"
    finally:
        con.close()


@pytest.fixture(scope="module")
def kill_base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[int, int, int, int]]:
    work = tmp_path_factory.mktemp("kill-base")
    sources = work / "sources"
    write_analyzer_jsonl(sources / "feedback.jsonl", KILL_EVENTS, as_of=AS_OF, days=200)
    write_bulk_sessions(sources / "sessions.jsonl", KILL_SESSIONS, spread_days=400)
    base = work / "base.duckdb"
    ingest_ok("analyzer", sources / "feedback.jsonl", "--db", base, "-q")
    ingest_ok("session-feedback", sources / "sessions.jsonl", "--db", base, "-q")
    counts = _expired_counts(base)
    expired_events, kept_events, expired_sessions, _ = counts
    assert expired_events > 10_000 and kept_events > 10_000 and expired_sessions > 1_000
    return base, counts


@pytest.mark.slow
@pytest.mark.parametrize("kill", KILL_POINTS, ids=lambda kill: kill.point)
def test_purge_killed_at_any_point_loses_nothing(
    kill: KillPoint, kill_base: tuple[Path, tuple[int, int, int, int]], tmp_path: Path
) -> None:
    base, (expired_events, kept_events, expired_sessions, kept_sessions) = kill_base
    db, archive, env = tmp_path / "w.duckdb", tmp_path / "archive", ops_env(tmp_path)
    shutil.copy(base, db)

    kill_at(kill.point, cli_command("purge", "--as-of", AS_OF, "--archive-dir", archive, "--db", db, "--yes"), env)

    # each table: every row past the cutoff still there, or none, as the point says; nothing else touched
    leftovers = [p.name for p in archive_listing(archive)]
    assert _expired_counts(db) == (
        0 if kill.events_archived else expired_events,
        kept_events,
        0 if kill.sessions_purged else expired_sessions,
        kept_sessions,
    ), leftovers
    assert [name.rsplit(".", 1)[-1] for name in leftovers] == ([kill.leftover] if kill.leftover else []), leftovers

    # the next purge completes the work; the archive then holds only files the log names
    ok(run_ops("purge", "--as-of", AS_OF, "--archive-dir", archive, "--db", db, "--yes", env=env))
    assert _expired_counts(db) == (0, kept_events, 0, kept_sessions)
    logged = {row["archive_uri"] for row in purge_log(db) if row["archive_uri"]}
    unnamed = [p.name for p in archive_listing(archive) if str(p) not in logged]
    assert not unnamed, f"archive files no purge_log row names: {unnamed}"
    _assert_each_event_once(db, base, archive, KILL_EVENTS)


# -- a purge that would remove most of a table asks first ------------------------------------------------------------
def _mostly_expired(folder: Path) -> tuple[Path, Path]:
    """Session feedback of which 3 of 4 records are past the 180-day cutoff (75% > the 50% default)."""
    config = write_sources(
        folder / "src",
        sessions=[session_on(f"old-{i}", at(S - days(1 + i))) for i in range(3)] + [session_on("new", at(AS_OF))],
    )
    db = folder / "w.duckdb"
    ingest_ok("--config", config, "--db", db, "-q")
    return config, db


def test_a_purge_removing_most_of_a_table_stops_before_touching_anything(tmp_path: Path) -> None:
    _, db = _mostly_expired(tmp_path)
    before = snapshot(db, DATA_TABLES)
    result = run_ops("purge", "--as-of", AS_OF, "--db", db, env=ops_env(tmp_path))
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: purge stopped before touching anything: ")
    assert "session_feedback would delete 3 of 4 rows of raw.session_feedback" in line and "more than 50%" in line
    assert "first purge of a long backlog" in line and "--yes" in line and "[purge] yes = true" in line
    assert snapshot(db, DATA_TABLES) == before
    assert purge_log(db) == []

    stricter = run_ops("purge", "--as-of", AS_OF, "--db", db, "--max-share", "0.8", env=ops_env(tmp_path))
    assert parse_purge(ok(stricter).stdout)["session_feedback"].deleted == 3, "75% is within a max share of 80%"


def test_yes_purges_a_long_backlog(tmp_path: Path) -> None:
    _, db = _mostly_expired(tmp_path)
    result = ok(run_ops("purge", "--as-of", AS_OF, "--db", db, "--yes", env=ops_env(tmp_path)))
    assert parse_purge(result.stdout)["session_feedback"].deleted == 3
    assert ids(db, "session_feedback") == {session_on("new", at(AS_OF))["id"]}


@pytest.mark.parametrize(("setting", "purged"), [("", False), ("[purge]\nyes = true\n", True)])
def test_nightly_purges_a_long_backlog_only_when_the_config_says_so(tmp_path: Path, setting: str, purged: bool) -> None:
    config, db = _mostly_expired(tmp_path)
    config.write_text(config.read_text(encoding="utf-8") + "\n" + setting, encoding="utf-8")
    result = run_ops("nightly", "--config", config, "--as-of", AS_OF, "--db", db, env=ops_env(tmp_path), timeout=600)
    assert (result.returncode == 0) == purged, result.stdout + result.stderr
    assert len(ids(db, "session_feedback")) == (1 if purged else 4)
    if not purged:
        assert re.search(r"ERROR purge +failed: purge stopped before touching anything", result.stdout), result.stdout
