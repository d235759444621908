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
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.ingest import ingest_ok, query, rows, snapshot
from tests.support.operations import (
    AS_OF,
    DATA_TABLES,
    GOLDEN,
    archive_listing,
    at,
    catalog_of,
    cli_command,
    days,
    eval_run_on,
    event_on,
    feedback_on,
    files_holding,
    files_under,
    golden_on,
    json_escaped,
    ok,
    ops_env,
    places_holding,
    places_mentioning,
    raw_line,
    reaction_on,
    read_archive,
    run_ops,
    session_on,
    sha256,
    stored_forms,
    write_sources,
)
from warehouse.location import serving_path

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


def _decoded_values(text: str) -> list[Any]:
    """Every key, string and number of `text` decoded as JSON; for text that is not JSON, its string literals."""
    try:
        stack, found = [json.loads(text)], []
    except ValueError:
        return [json.loads(f'"{body}"') for body in re.findall(r'"((?:[^"\\]|\\.)*)"', text)]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found += item.keys()
            stack += item.values()
        elif isinstance(item, list):
            stack += item
        else:
            found.append(item)
    return found


def carries(row: dict[str, Any], user: str) -> bool:
    """The row holds the id as a value, or as a decoded JSON key, string or number (escaped or not) in its text."""
    for value in row.values():
        if value == user:
            return True
        if isinstance(value, str) and any(
            decoded == user or (type(decoded) is int and str(decoded) == user) for decoded in _decoded_values(value)
        ):
            return True
    return False


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
    before, file_before = snapshot(db, ALL_TABLES), db.read_bytes()
    dry = ok(run_ops("forget", "--user-id", USER, "--dry-run", "--db", db, env=ops_env(tmp_path)))
    assert db.read_bytes() == file_before, "a dry run changed the warehouse file's bytes"
    assert not db.with_name(db.name + ".wal").exists()
    assert snapshot(db, ALL_TABLES) == before, "a dry run changed the warehouse"
    would = dict(re.findall(r"^(raw\.\w+)\s+would delete ([\d,]+)$", dry.stdout, flags=re.M))
    assert {k: int(v) for k, v in would.items()} == {
        "raw.session_feedback": 3,
        "raw.turn_reactions": 2,
        "raw.reaction_index": 0,  # no index loaded here (tests/ingest/test_reaction_index.py erases index rows)
        "raw.workspace_feedback": 2,
        "raw.quarantine": 3,
    }, dry.stdout
    assert re.search(r"raw\.workspace_feedback\s+would remove the id from 1 reviewed", dry.stdout), dry.stdout
    assert rows(db, "select * from raw.erasure_log") == [], "a dry run wrote to the erasure log"
    assert "a real run records the request in raw.erasure_log as sha256 " in dry.stdout


def test_forget_says_when_it_matched_nothing(tmp_path: Path) -> None:
    db, _archive = warehouse_for(tmp_path, USER)
    for extra in (["--dry-run"], ["--no-build"]):
        result = ok(run_ops("forget", "--user-id", "nobody-by-this-name", *extra, "--db", db, env=ops_env(tmp_path)))
        assert "no row matched the id 'nobody-by-this-name': nothing " in result.stdout, result.stdout


@pytest.mark.parametrize("empty", ["", "   "])
def test_forget_refuses_an_empty_id(tmp_path: Path, empty: str) -> None:
    db, _archive = warehouse_for(tmp_path, USER)
    before = snapshot(db, ALL_TABLES)
    result = run_ops("forget", "--user-id", empty, "--db", db, env=ops_env(tmp_path))
    assert result.returncode == 2 and "must not be empty" in result.stderr, result.stderr
    assert snapshot(db, ALL_TABLES) == before


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
    """On a built warehouse: the rewrite keeps every schema, table, view, macro, sequence and index that dbt and
    the loader made; with the rebuild the models lose the id too, the file holds none of its bytes, and dbt
    builds on it again."""
    db, env = tmp_path / "warehouse.duckdb", ops_env(tmp_path)
    user = BYTE_USERS["non-ascii"]
    ingest_ok("--config", demo_sources, "--db", db, "-q")
    ingest_ok("--config", every_form_sources(tmp_path / "user", user), "--db", db, "-q")
    ok(run_ops("purge", "--as-of", AS_OF, "--db", db, env=env))
    ok(run_ops("build", "--as-of", AS_OF, "--db", db, env=env, timeout=600))
    built = places_mentioning(db, user)
    assert any(place.startswith("marts.") for place in built), f"the marts should hold the id before: {built}"
    served = serving_path(db)
    assert places_mentioning(served, user), "the build should have published the id's rows to the serving file"
    catalog = catalog_of(db)
    assert {"raw", "staging", "intermediate", "marts", "seeds"} <= {s for (s,) in catalog["schemas"]}
    archive = db.parent / "warehouse-archive"
    forms = stored_forms(user)
    assert set(files_holding(warehouse_files(db), forms).get(str(db), [])) == set(forms), "the test cannot see it"
    # this archive is big enough for zstd to compress the snippet: decoded, it holds the id
    assert [row for row in read_archive(archive) if user in repr(row)], "the test cannot see the id in the archive"

    # without the rebuild: the rewritten file holds the same objects; only the raw tables lost rows
    no_build = ok(run_ops("forget", "--user-id", user, "--no-build", "--db", db, env=env))
    assert "the dbt-built tables and the serving file still hold the id" in no_build.stderr, no_build.stderr
    assert verification(no_build.stdout)["serving.all_columns"] > 0, "the verification must read the serving file"
    rewritten = catalog_of(db)
    for part in ("schemas", "columns", "views", "macros", "sequences", "indexes", "constraints"):
        assert rewritten[part] == catalog[part], part
    changed = {t[:2] for t in rewritten["tables"]} ^ {t[:2] for t in catalog["tables"]}
    assert not changed, changed
    assert {t[:2] for t in set(rewritten["tables"]) ^ set(catalog["tables"])} <= {
        ("raw", table) for table in (*DATA_TABLES, "quarantine", "erasure_log")
    }, "a table other than the erased raw tables changed"

    # with the rebuild: the models lose the id, and no file holds its bytes; the report keeps its as-of
    (as_of_before,) = rows(db, "select as_of_at from marts.build_info")
    result = ok(run_ops("forget", "--user-id", user, "--db", db, env=env, timeout=600))
    assert rows(db, "select as_of_at from marts.build_info") == [as_of_before], "the rebuild moved the as-of"
    assert f"rebuilding the marts as of {as_of_before['as_of_at'].isoformat(timespec='microseconds')}Z" in result.stdout
    assert places_mentioning(db, user) == [], "the id survives in a model after the rebuild"
    assert places_mentioning(served, user) == [], "the rebuild did not republish: the dashboard still shows the id"
    assert all(count == 0 for count in verification(result.stdout).values())
    assert files_holding([*warehouse_files(db), served, *files_under(archive)], forms) == {}, "the id's bytes survive"
    assert not [row for row in read_archive(archive) if user in repr(row)], "the archive still holds the id"
    assert [p.name for p in warehouse_files(db)] == [db.name]
    (active,) = query(db, "select count(*) from marts.turn_reactions_active")[0]
    assert active > 0, "the rebuild left the marts empty"

    # dbt builds on the rewritten file, to the same objects as before the erasure
    ok(run_ops("build", "--as-of", AS_OF, "--db", db, env=env, timeout=600))
    rebuilt = catalog_of(db)
    for part in ("schemas", "columns", "views", "macros", "sequences", "indexes", "constraints"):
        assert rebuilt[part] == catalog[part], part
    assert [t[:2] for t in rebuilt["tables"]] == [t[:2] for t in catalog["tables"]]
    shutil.rmtree(tmp_path / "dbt-target", ignore_errors=True)


# -- every form of the id, and no bytes left behind --------------------------------------------------------------
# Ids that no other id in the data contains, so that a search of the files' bytes means this user and nobody else.
BYTE_USERS = {"ascii": "zelda-erase-9c4e1b", "non-ascii": "josé-ñandú-4f7a", "number": "982734650193"}
BYSTANDER = "yusuf-keep-3b8d"
PLACEHOLDER = "__the-user-as-written__"
GOLDEN_PROMOTED_AT = GOLDEN["golden"]["promoted_at"]


def every_form_sources(folder: Path, user: str) -> Path:
    """The user in every place and form: contract columns, quarantined lines with the id JSON-escaped (and, for a
    numeric id, as a JSON number), free text that names the user (an analyzer snippet that the purge archives, a
    comment), JSON documents (a feedback context, a golden session's promoter); beside a bystander's rows."""
    moment = at(RECENT)
    numeric = user.isdigit()
    in_json = int(user) if numeric else user
    reactions: list[Any] = [
        reaction_on("r-user", moment, user=user),
        reaction_on("r-bystander", moment, user=BYSTANDER),
        # quarantined (confidence out of range), the line kept as read: the id spelled with \\u escapes
        raw_line(
            reaction_on("r-user-escaped", moment, user=PLACEHOLDER, confidence=3.0), PLACEHOLDER, json_escaped(user)
        ),
        # quarantined (not JSON: a line cut short), the id escaped in one of its string literals
        cut_after(raw_line(reaction_on("r-user-cut", moment, user=PLACEHOLDER), PLACEHOLDER, json_escaped(user)), user),
        # quarantined (confidence out of range), the bystander's: must stay
        reaction_on("r-bystander-bad", moment, user=BYSTANDER, confidence=3.0),
    ]
    if numeric:  # quarantined (user_id is not a string): the id as a JSON number
        reactions.append(raw_line(reaction_on("r-user-number", moment, user=PLACEHOLDER), PLACEHOLDER, user))
    reviewed = {"status": "reviewed", "reviewed_at": at(RECENT + days(1)), "review_notes": "checked"}
    golden = golden_on("gold-by-user", at(AS_OF - days(30)))
    golden["metadata"]["golden"]["promoted_by"] = user
    return write_sources(
        folder,
        analyzer=[
            # archived by the purge (older than 90 days), its snippet naming the user
            event_on("ev-old-user", at(AS_OF - days(120)), user_message_snippet=f"this is {user}, undo that"),
            event_on("ev-old-bystander", at(AS_OF - days(120)), user_message_snippet="undo that please"),
            event_on("ev-new-user", moment, user_message_snippet=f"{user} again: wrong file"),
        ],
        sessions=[
            session_on("s-user", moment, user=user),
            session_on("s-user-bad", moment, user=user, label="meh"),  # quarantined
            session_on("s-bystander", moment, user=BYSTANDER),
        ],
        reactions=reactions,
        feedback=[
            feedback_on("f-user", moment, created_by=user),
            feedback_on("f-reviewed-by-user", moment, created_by=BYSTANDER, reviewed_by_user_id=user, **reviewed),
            feedback_on(
                "f-bystander-mentions",
                moment,
                created_by=BYSTANDER,
                comment=f"same as {user}: slow",
                context={"cc": [in_json], "turn": 3},
            ),
            feedback_on("f-bystander", moment, created_by=BYSTANDER, comment="fine"),
        ],
        workspace_sessions=[golden],
    )


def cut_after(line: str, user: str) -> str:
    """The line cut a few characters after the user's escaped id: no longer JSON."""
    end = line.index(json_escaped(user)) + len(json_escaped(user)) + 3
    return line[:end]


def warehouse_files(db: Path) -> list[Path]:
    """The warehouse, its WAL and anything else beside it named after it (temporary copies, leftovers)."""
    return sorted(p for p in db.parent.iterdir() if p.is_file() and p.name.startswith(db.name))


@pytest.mark.parametrize("kind", list(BYTE_USERS))
def test_forget_finds_every_form_of_the_id_and_leaves_no_bytes(tmp_path: Path, kind: str) -> None:
    user = BYTE_USERS[kind]
    db, archive = tmp_path / "warehouse.duckdb", tmp_path / "warehouse-archive"
    env = ops_env(tmp_path)
    ingest_ok("--config", every_form_sources(tmp_path / "sources", user), "--db", db, "-q")
    ok(run_ops("purge", "--as-of", AS_OF, "--archive-dir", archive, "--db", db, env=env))
    forms = stored_forms(user)

    # before: the search sees the id's bytes, in the warehouse file and in the archive, in every stored form
    before = files_holding(warehouse_files(db) + files_under(archive), forms)
    in_warehouse = {form for path, found in before.items() if path.startswith(str(db)) for form in found}
    assert in_warehouse == set(forms), f"the test cannot see every form of the id in the warehouse: {before}"
    assert any(str(archive) in path for path in before), f"the test cannot see the id in the archive: {before}"
    quarantined = rows(db, "select record_key, raw_text from raw.quarantine")
    assert any(json_escaped(user) in (r["raw_text"] or "") for r in quarantined), "no line with the id escaped"
    bystander_rows = {
        "session_feedback": query(db, "select id from raw.session_feedback where user_id_or_null = ?", [BYSTANDER]),
        "turn_reactions": query(db, "select rn from raw.turn_reactions where user_id = ?", [BYSTANDER]),
        "workspace_feedback": query(
            db, "select id from raw.workspace_feedback where created_by = ? order by 1", [BYSTANDER]
        ),
    }
    bystander_bad = [r for r in quarantined if BYSTANDER in (r["raw_text"] or "")]
    assert len(bystander_bad) == 1

    # the real command line
    result = run_ops("forget", "--user-id", user, "--no-build", "--db", db, env=env)
    ok(result)

    # after: no form of the id in any file of the warehouse or the archive, and no row mentions it
    after = files_holding(warehouse_files(db) + files_under(archive), forms)
    assert after == {}, f"the id's bytes survive the erasure: {after}"
    assert places_mentioning(db, user) == [], "a row still mentions the id"
    assert not [row for row in read_archive(archive) if user in repr(row)], "the archive still holds the id"
    assert [p.name for p in warehouse_files(db)] == [db.name], "something was left beside the warehouse"

    # what it printed: the counts, the rewrite, a verification of zeros
    deleted = dict(re.findall(r"^(raw\.\w+)\s+deleted ([\d,]+)$", result.stdout, flags=re.M))
    assert {k: int(v) for k, v in deleted.items()} == {
        "raw.session_feedback": 1,
        "raw.turn_reactions": 1,
        "raw.reaction_index": 0,
        "raw.workspace_feedback": 1,
        # the cut reaction line is no JSON object, so it claims to be no reaction and the quarantine never kept
        # its text (nor the id in it): nothing of it to erase
        "raw.quarantine": 3 if kind == "number" else 2,
    }, result.stdout
    assert re.search(rf"^rewrote {re.escape(str(db))}\b", result.stdout, flags=re.M), result.stdout
    printed = verification(result.stdout)
    assert printed and all(count == 0 for count in printed.values()), result.stdout

    # nobody else's rows went; the rows that only named the user stay, without the id
    for table, expected in bystander_rows.items():
        key = {"session_feedback": "id", "turn_reactions": "rn", "workspace_feedback": "id"}[table]
        column = {
            "session_feedback": "user_id_or_null",
            "turn_reactions": "user_id",
            "workspace_feedback": "created_by",
        }
        order = " order by 1" if table == "workspace_feedback" else ""
        assert query(db, f"select {key} from raw.{table} where {column[table]} = ?{order}", [BYSTANDER]) == expected
    quarantined = rows(db, "select record_key, raw_text from raw.quarantine")
    # the cut reaction line is no JSON object: kept without text, under its content's sha256 (nothing of the user)
    withheld = [r for r in quarantined if r["record_key"].startswith("sha256:")]
    assert len(withheld) == 1 and withheld[0]["raw_text"] is None
    assert [r["record_key"] for r in quarantined if r not in withheld] == [r["record_key"] for r in bystander_bad], (
        "the bystander's quarantined line must stay, the user's go"
    )
    mentions = rows(
        db, "select comment, context, reviewed_by_user_id from raw.workspace_feedback where id = 'f-bystander-mentions'"
    )
    assert mentions[0]["comment"] is None and json.loads(mentions[0]["context"]) == {"cc": [None], "turn": 3}
    reviewed = rows(
        db, "select status, reviewed_by_user_id from raw.workspace_feedback where id = 'f-reviewed-by-user'"
    )
    assert reviewed == [{"status": "reviewed", "reviewed_by_user_id": None}]
    golden = query(db, "select metadata from raw.workspace_sessions where id = 'gold-by-user'")
    assert json.loads(golden[0][0])["golden"] == {"set": "core", "promoted_at": GOLDEN_PROMOTED_AT, "promoted_by": None}
    snippets = dict(query(db, "select session_id, user_message_snippet from raw.analyzer_events"))
    assert snippets == {"ev-new-user": None}, "the event stays, the snippet that names the user goes"
    archived = dict(read_archive(archive, "select session_id, user_message_snippet from archive"))
    assert archived == {"ev-old-user": None, "ev-old-bystander": "undo that please"}


def test_forget_rewrite_leaves_readers_whole(tmp_path: Path) -> None:
    """A dashboard-like reader attaching the file read-only in a loop during `forget` sees the data before or
    after the erasure, or waits for the lock; never a damaged file."""
    user = BYTE_USERS["ascii"]
    db = tmp_path / "warehouse.duckdb"
    ingest_ok("--config", every_form_sources(tmp_path / "sources", user), "--db", db, "-q")
    (before,) = query(db, "select count(*) from raw.session_feedback")[0]
    stop, log = tmp_path / "stop", tmp_path / "reads.jsonl"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(db), str(stop), str(log)], stdin=subprocess.DEVNULL)
    try:
        wait_for_reads(log, 1)
        ok(run_ops("forget", "--user-id", user, "--no-build", "--db", db, env=ops_env(tmp_path)))
        reads_at_forget_end = len(log.read_text().splitlines())
        wait_for_reads(log, reads_at_forget_end + 5)
    finally:
        stop.touch()
        assert reader.wait(timeout=60) == 0
    reads = [json.loads(line) for line in log.read_text().splitlines()]
    errors = [r["error"] for r in reads if "error" in r]
    assert errors == [], errors
    counts = {r["count"] for r in reads if "count" in r}
    assert counts == {before, before - 1}, f"reads saw {counts}, expected {before} then {before - 1}"


READER = """
import json, sys, time, pathlib, duckdb
db, stop, log = sys.argv[1], pathlib.Path(sys.argv[2]), open(sys.argv[3], "a", buffering=1)
con = duckdb.connect()
while not stop.exists():
    try:
        con.execute(f"attach '{db}' as w (read_only)")
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            time.sleep(0.005)
            continue
        log.write(json.dumps({"error": str(exc)}) + "\\n")
        continue
    try:
        count = con.execute("select count(*) from w.raw.session_feedback").fetchone()[0]
        con.execute("select count(*), max(length(raw_text)) from w.raw.quarantine").fetchall()
        log.write(json.dumps({"count": count}) + "\\n")
    except duckdb.Error as exc:
        log.write(json.dumps({"error": str(exc)}) + "\\n")
    finally:
        con.execute("detach w")
    time.sleep(0.02)  # a page load now and then, as the dashboard does
"""


def wait_for_reads(log: Path, n: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= n:
            return
        time.sleep(0.01)
    raise AssertionError(f"the reader did not read {n} times in {timeout} s")
