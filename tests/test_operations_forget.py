"""`forget --user-id ID`: one user's rows erased from every raw table and archive, audited by hash, verified.

The warehouse holds the user in every place a user id lives (session feedback
`user_id_or_null`, reactions' user, workspace feedback `created_by` and
`reviewed_by_user_id`, quarantined lines), next to a look-alike user whose id
starts with the same characters and an unrelated user, both of whom must be left
alone. An analyzer archive written by `purge` sits beside the warehouse. Every
test but the rebuild test runs `forget --no-build`; the rebuild test builds the
marts first (so they hold the id) and lets `forget` rebuild them.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fixtures_ingest import ingest_ok, query, rows, snapshot
from fixtures_operations import (
    AS_OF,
    DATA_TABLES,
    archive_listing,
    at,
    cli_command,
    days,
    eval_run_on,
    event_on,
    feedback_on,
    golden_on,
    ok,
    ops_env,
    places_holding,
    reaction_on,
    read_archive,
    run_ops,
    session_on,
    sha256,
    write_sources,
)

USER = "alice-7f3c"
LOOKALIKE = "alice-7f3c2"  # the user's id is a prefix of this one
OTHER = "bob-19ab"
RECENT = AS_OF - days(5)
ALL_TABLES = (*DATA_TABLES, "quarantine", "load_manifest", "purge_log")


def user_sources(folder: Path, user: str) -> Path:
    """Every kind of row that can carry a user id, for `user`, LOOKALIKE and OTHER."""
    moment = at(RECENT)
    sessions: list[Any] = [
        session_on("s-user-1", moment, user=user),
        session_on("s-user-2", at(RECENT - days(1)), user=user, label="negative"),
        session_on("s-user-3", at(RECENT - days(2)), user=user, label="skip"),
        session_on("s-look", moment, user=LOOKALIKE),
        session_on("s-other", moment, user=OTHER),
        session_on("s-anon", moment, user=None),
        # quarantined (label out of contract): the quarantine keeps the user's id in its text
        session_on("s-user-bad", moment, user=user, label="meh"),
        session_on("s-look-bad", moment, user=LOOKALIKE, label="meh"),
    ]
    bad_utf8 = json.dumps(reaction_on("r-user-latin1", moment, user=user, text="cafe")).encode()
    reactions: list[Any] = [
        reaction_on("r-user-1", moment, user=user),
        reaction_on("r-user-2", moment, user=user, origin="machine", confidence=0.9),
        reaction_on("r-look", moment, user=LOOKALIKE),
        reaction_on("r-other", moment, user=OTHER),
        reaction_on("r-user-bad", moment, user=user, confidence=3.0),  # quarantined: out of range
        bad_utf8.replace(b'"cafe"', b'"caf\xe9"'),  # quarantined: not UTF-8
    ]
    reviewed = {"status": "reviewed", "reviewed_at": at(RECENT + days(1)), "review_notes": "looked at it"}
    feedback = [
        feedback_on("f-user", moment, created_by=user),
        feedback_on("f-user-reviewed-by-other", moment, created_by=user, reviewed_by_user_id=OTHER, **reviewed),
        feedback_on("f-reviewed-by-user", moment, created_by=OTHER, reviewed_by_user_id=user, **reviewed),
        feedback_on("f-reviewed-by-look", moment, created_by=OTHER, reviewed_by_user_id=LOOKALIKE, **reviewed),
        feedback_on("f-look", moment, created_by=LOOKALIKE),
        feedback_on("f-other", moment, created_by=OTHER),
    ]
    return write_sources(
        folder,
        analyzer=[event_on("ev-old", at(AS_OF - days(120))), event_on("ev-new", moment)],
        sessions=sessions,
        reactions=reactions,
        feedback=feedback,
        workspace_sessions=[golden_on("gold-1", at(AS_OF - days(30)))],
        eval_runs=[eval_run_on("er-1", moment, created_by=None, triggered_by="scheduled")],
    )


def warehouse_for(work: Path, user: str) -> tuple[Path, Path]:
    """The warehouse with `user` everywhere, purged once so that an analyzer archive exists; (db, archive)."""
    db, archive = work / "warehouse.duckdb", work / "warehouse-archive"
    ingest_ok("--config", user_sources(work / "sources", user), "--db", db, "-q")
    ok(run_ops("purge", "--as-of", AS_OF, "--archive-dir", archive, "--db", db, env=ops_env(work)))
    assert archive_listing(archive), "the purge should have archived ev-old"
    return db, archive


def verification(stdout: str) -> dict[str, int]:
    """The `place count` lines printed after the verification header."""
    lines = stdout.splitlines()
    header = next((i for i, line in enumerate(lines) if line.lower().startswith("verification")), None)
    assert header is not None, f"no verification in:\n{stdout}"
    found = {}
    for line in lines[header + 1 :]:
        if m := re.match(r"^\s+(\S+)\s+(\d+)$", line):
            found[m[1]] = int(m[2])
    assert found, f"no verification rows in:\n{stdout}"
    return found


def table_rows(db: Path, table: str) -> list[dict[str, Any]]:
    return sorted(rows(db, f"select * from raw.{table}"), key=repr)


def carries(row: dict[str, Any], user: str) -> bool:
    return any(value == user for value in row.values()) or any(
        isinstance(value, str) and json.dumps(user) in value for value in row.values()
    )


@pytest.mark.parametrize("user", [USER, "o'brien@example.com"])
def test_forget_erases_the_user_from_every_raw_table(tmp_path: Path, user: str) -> None:
    db, archive = warehouse_for(tmp_path, user)
    before = {table: table_rows(db, table) for table in ALL_TABLES}
    archive_before = {p: p.read_bytes() for p in archive_listing(archive)}
    lookalike_places = places_holding(db, LOOKALIKE)
    assert {"raw.session_feedback.user_id_or_null", "raw.turn_reactions.user_id", "raw.quarantine.raw_text"} <= set(
        places_holding(db, user)
    ), "the fixture should put the user in every place"

    result = ok(run_ops("forget", "--user-id", user, "--no-build", "--db", db, env=ops_env(tmp_path)))

    assert places_holding(db, user) == [], "the id is still in the warehouse"
    assert places_holding(db, LOOKALIKE) == lookalike_places, "a user whose id starts the same was touched"
    after = {table: table_rows(db, table) for table in ALL_TABLES}
    # the user's own rows are gone, nobody else's
    for table, column in (("session_feedback", "user_id_or_null"), ("turn_reactions", "user_id")):
        assert after[table] == [r for r in before[table] if r[column] != user], table
    expected_feedback = []
    for row in before["workspace_feedback"]:
        if row["created_by"] == user:
            continue
        if row["reviewed_by_user_id"] == user:  # reviewed by the user: kept, the reviewer id removed
            row = {**row, "reviewed_by_user_id": None}
        expected_feedback.append(row)
    assert after["workspace_feedback"] == sorted(expected_feedback, key=repr)
    reviewed = next(r for r in after["workspace_feedback"] if r["id"] == "f-reviewed-by-user")
    assert (reviewed["status"], reviewed["review_notes"]) == ("reviewed", "looked at it")
    assert after["quarantine"] == [r for r in before["quarantine"] if not carries(r, user)]
    assert len(before["quarantine"]) - len(after["quarantine"]) == 3, "the user's three quarantined lines"
    for table in ("analyzer_events", "workspace_sessions", "workspace_eval_runs", "load_manifest", "purge_log"):
        assert after[table] == before[table], f"{table} changed"

    # the archive holds no user id: untouched, and the id is not in it
    assert {p: p.read_bytes() for p in archive_listing(archive)} == archive_before
    assert not [row for row in read_archive(archive) if user in repr(row)], "the id is in the archive"

    # the verification printed: every place checked shows zero
    printed = verification(result.stdout)
    assert all(count == 0 for count in printed.values()), printed
    for place in (
        "raw.session_feedback.user_id_or_null",
        "raw.turn_reactions.user_id",
        "raw.workspace_feedback.created_by",
        "raw.workspace_feedback.reviewed_by_user_id",
    ):
        assert place in printed, f"{place} not verified:\n{result.stdout}"


def test_forget_audits_the_request_by_hash_only(tmp_path: Path) -> None:
    db, _archive = warehouse_for(tmp_path, USER)
    result = ok(run_ops("forget", "--user-id", USER, "--no-build", "--db", db, env=ops_env(tmp_path)))
    log = rows(db, "select * from raw.erasure_log")
    assert len(log) == 1
    (entry,) = log
    assert entry["user_id_sha256"] == sha256(USER)
    assert entry["is_dry_run"] is False
    # 3 sessions + 2 reactions + 2 created feedback rows + 3 quarantined lines; 1 review pseudonymised
    assert (entry["rows_deleted"], entry["rows_pseudonymised"]) == (10, 1), entry
    assert USER not in json.dumps(entry, default=str), "the audit row holds the id in clear"
    assert sha256(USER) in result.stdout


def test_forget_dry_run_counts_and_changes_nothing(tmp_path: Path) -> None:
    db, _archive = warehouse_for(tmp_path, USER)
    before = snapshot(db, ALL_TABLES)
    dry = ok(run_ops("forget", "--user-id", USER, "--dry-run", "--db", db, env=ops_env(tmp_path)))
    assert snapshot(db, ALL_TABLES) == before, "a dry run changed the warehouse"
    would = dict(re.findall(r"^(raw\.\w+)\s+would delete ([\d,]+)$", dry.stdout, flags=re.M))
    assert {k: int(v) for k, v in would.items()} == {
        "raw.session_feedback": 3,
        "raw.turn_reactions": 2,
        "raw.workspace_feedback": 2,
        "raw.quarantine": 3,
    }, dry.stdout
    assert re.search(r"raw\.workspace_feedback\s+would remove the id from 1 reviewed", dry.stdout), dry.stdout
    dry_log = rows(db, "select * from raw.erasure_log")
    assert all(row["is_dry_run"] for row in dry_log), "a dry run logged as a real erasure"


def test_forget_twice_erases_nothing_more(tmp_path: Path) -> None:
    db, _archive = warehouse_for(tmp_path, USER)
    env = ops_env(tmp_path)
    ok(run_ops("forget", "--user-id", USER, "--no-build", "--db", db, env=env))
    after_first = snapshot(db, DATA_TABLES + ("quarantine",))
    again = ok(run_ops("forget", "--user-id", USER, "--no-build", "--db", db, env=env))
    assert snapshot(db, DATA_TABLES + ("quarantine",)) == after_first
    assert all(count == 0 for count in verification(again.stdout).values())
    second = rows(db, "select * from raw.erasure_log order by requested_at")[-1]
    assert (second["rows_deleted"], second["rows_pseudonymised"]) == (0, 0)


def test_forget_removes_the_id_from_eval_runs_it_created(tmp_path: Path) -> None:
    """workspace eval_runs.created_by is a user id (auth.users) too: no row may still carry it."""
    config = write_sources(
        tmp_path / "src",
        sessions=[session_on("s-user", at(RECENT), user=USER)],
        eval_runs=[eval_run_on("er-manual", at(RECENT), created_by=USER, triggered_by="manual")],
    )
    db = tmp_path / "w.duckdb"
    ingest_ok("--config", config, "--db", db, "-q")
    ok(run_ops("forget", "--user-id", USER, "--no-build", "--db", db, env=ops_env(tmp_path)))
    assert places_holding(db, USER) == []


def test_forget_removes_the_id_from_golden_sessions_it_promoted(tmp_path: Path) -> None:
    """A golden session's metadata.golden.promoted_by is a user id too: no row may still carry it."""
    golden = golden_on("gold-by-user", at(AS_OF - days(30)))
    golden["metadata"]["golden"]["promoted_by"] = USER
    config = write_sources(
        tmp_path / "src", sessions=[session_on("s-user", at(RECENT), user=USER)], workspace_sessions=[golden]
    )
    db = tmp_path / "w.duckdb"
    ingest_ok("--config", config, "--db", db, "-q")
    ok(run_ops("forget", "--user-id", USER, "--no-build", "--db", db, env=ops_env(tmp_path)))
    assert places_holding(db, USER) == []
    assert query(db, "select count(*) from raw.workspace_sessions where id = 'gold-by-user'") == [(1,)], (
        "the golden session itself must stay"
    )


@pytest.fixture(scope="module")
def demo_sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small demo data set (valid for every dbt test) as of AS_OF; its sources.toml."""
    folder = tmp_path_factory.mktemp("forget-demo")
    command = cli_command("demo-data", folder / "demo", "--scale", "0.02", "--as-of", AS_OF, "-q")
    ok(subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False))
    return folder / "demo" / "sources.toml"


@pytest.mark.slow
def test_forget_rebuilds_the_marts(tmp_path: Path, demo_sources: Path) -> None:
    db, env = tmp_path / "warehouse.duckdb", ops_env(tmp_path)
    ingest_ok("--config", demo_sources, "--db", db, "-q")
    ingest_ok("--config", user_sources(tmp_path / "user", USER), "--db", db, "-q")
    ok(run_ops("build", "--as-of", AS_OF, "--db", db, env=env, timeout=600))
    built = places_holding(db, USER)
    assert any(place.startswith("marts.") for place in built), f"the marts should hold the id before: {built}"

    result = ok(run_ops("forget", "--user-id", USER, "--db", db, env=env, timeout=600))
    assert places_holding(db, USER) == [], "the id survives in a model after the rebuild"
    assert all(count == 0 for count in verification(result.stdout).values())
    (active,) = query(db, "select count(*) from marts.turn_reactions_active")[0]
    assert active > 0, "the rebuild left the marts empty"
    shutil.rmtree(tmp_path / "dbt-target", ignore_errors=True)
