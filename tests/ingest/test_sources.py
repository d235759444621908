"""Every reader and every input format lands its records in the right raw table, field for field."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.ingest import (
    analyzer_event,
    assert_counts_add_up,
    cli_env,
    count,
    eval_run,
    ingest_ok,
    manifest,
    parse_report,
    places_containing,
    query,
    reaction_envelope,
    reaction_payload,
    rn_of,
    rows,
    run_cli,
    session_record,
    workspace_feedback,
    workspace_session,
    write_jsonl,
    write_session_sqlite,
)
from tests.support.postgres_tables import (
    conv_row,
    create_pg_conv_messages,
    create_pg_session_feedback,
    create_pg_workspace,
    index_rn,
)

FREE_TEXT = "FREE-TEXT-the user typed this and it must never be stored"


def utc(text: str | None) -> dt.datetime | None:
    """An ISO-8601 timestamp as the naive UTC datetime the warehouse stores."""
    if text is None:
        return None
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(dt.UTC).replace(tzinfo=None)


def event_rows(db: Path) -> dict[str, dict[str, Any]]:
    return {r["event_id"]: r for r in rows(db, "select * from raw.analyzer_events")}


def assert_event_landed(row: dict[str, Any], event: dict[str, Any], *, snippet: bool = True) -> None:
    for name in (
        "event_id",
        "session_id",
        "skill_id",
        "invocation_uuid",
        "outcome",
        "confidence",
        "correction_type",
        "turns_to_feedback",
        "ai_tools_used",
        "dimension_hint",
    ):
        assert row[name] == event.get(name), name
    assert row["timestamp"] == utc(event["timestamp"])
    assert row["user_message_snippet"] == (event.get("user_message_snippet") if snippet else None)


def assert_session_landed(row: dict[str, Any], record: dict[str, Any]) -> None:
    for name in ("id", "session_id_opaque", "user_id_or_null", "label", "turn_count_at_end", "source"):
        assert row[name] == record[name], name
    assert row["recorded_at"] == utc(record["recorded_at"])
    assert row["recorded_date"] == utc(record["recorded_at"]).date()
    assert row["schema_version"] == record.get("schema_version", 1)


def assert_reaction_landed(row: dict[str, Any], payload: dict[str, Any], envelope: dict[str, Any] | None) -> None:
    body, meta = payload["reaction"], payload["meta"]
    assert row["rn"] == meta["rn"]
    assert row["conversation_id"] == payload["conversation_id"]
    assert row["bundle_id"] == payload["bundle_id"]
    assert row["turn_id"] == body["turn_id"]
    assert row["track_id"] == meta["track_id"]
    assert row["user_type"] == meta["user_type"]
    assert row["kind"] == meta["kind"]
    assert row["origin"] == body["origin"]
    assert row["reaction"] == body["reaction"]
    assert row["confidence"] == body["confidence"]
    assert row["ts"] == utc(body["ts"])
    assert row["text"] == body.get("text")
    if envelope is None:
        assert (row["tenant"], row["project"], row["user_id"], row["tags"]) == (None, None, None, None)
    else:
        assert row["tenant"] == envelope["tenant"]
        assert row["project"] == envelope["project"]
        assert row["user_id"] == envelope["user_id"]
        assert row["tags"] == envelope["tags"]


def assert_one_clean_load_per_input(db: Path, expected: dict[str, int]) -> None:
    """`expected`: manifest uri suffix -> rows landed; nothing quarantined, no duplicates."""
    loads = manifest(db)
    assert len(loads) == len(expected), loads
    for suffix, landed in expected.items():
        (row,) = [r for r in loads if r["uri"].endswith(suffix)]
        assert (row["rows_read"], row["rows_loaded"], row["rows_quarantined"], row["rows_duplicate"]) == (
            landed,
            landed,
            0,
            0,
        ), row


# -- analyzer -----------------------------------------------------------------------------------
def test_analyzer_jsonl_file(tmp_path: Path) -> None:
    events = [analyzer_event(n) for n in range(6)]
    events[1]["ai_tools_used"] = []
    source = write_jsonl(tmp_path / "feedback.jsonl", events)
    db = tmp_path / "w.duckdb"

    result = ingest_ok("analyzer", source, "--db", db, fresh_process=True)

    landed = event_rows(db)
    assert set(landed) == {e["event_id"] for e in events}
    for event in events:
        assert_event_landed(landed[event["event_id"]], event)
        assert landed[event["event_id"]]["_source_uri"] == str(source.resolve())
    assert_one_clean_load_per_input(db, {"feedback.jsonl": 6})
    (load,) = manifest(db)
    assert load["source"] == "analyzer" and load["target_table"] == "analyzer_events"
    assert load["size_bytes"] == source.stat().st_size and load["checksum"]
    assert {r["_load_id"] for r in landed.values()} == {load["load_id"]}
    assert parse_report(result.stdout)[2] == {"read": 6, "loaded": 6, "quarantined": 0, "duplicates": 0}


def test_analyzer_store_folder_with_archive(tmp_path: Path) -> None:
    store = tmp_path / "feedback-store"
    archived = [analyzer_event(n) for n in (10, 11, 12)]
    active = [analyzer_event(n) for n in range(4)] + [analyzer_event(10)]  # event 10 is in both
    write_jsonl(store / "archive" / "feedback-20260101.jsonl", archived[:2])
    write_jsonl(store / "archive" / "feedback-20260201.jsonl", archived[2:])
    write_jsonl(store / "feedback.jsonl", active)
    db = tmp_path / "w.duckdb"

    result = ingest_ok("analyzer", store, "--db", db)

    landed = event_rows(db)
    assert len(landed) == 7 == count(db, "analyzer_events")
    for event in archived + active:
        assert_event_landed(landed[event["event_id"]], event)
    # archives are read first: the copy that landed is the archived one
    assert landed[archived[0]["event_id"]]["_source_uri"].endswith("archive/feedback-20260101.jsonl")
    loads = {Path(r["uri"]).name: r for r in manifest(db)}
    assert set(loads) == {"feedback-20260101.jsonl", "feedback-20260201.jsonl", "feedback.jsonl"}
    active_load = loads["feedback.jsonl"]
    assert (active_load["rows_read"], active_load["rows_loaded"], active_load["rows_duplicate"]) == (5, 4, 1)
    assert parse_report(result.stdout)[2] == {"read": 8, "loaded": 7, "quarantined": 0, "duplicates": 1}
    assert count(db, "quarantine") == 0


def test_analyzer_several_paths_in_one_command(tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "a" / "feedback.jsonl", [analyzer_event(n) for n in range(3)])
    second = write_jsonl(tmp_path / "b" / "feedback.jsonl", [analyzer_event(n) for n in range(2, 6)])
    db = tmp_path / "w.duckdb"

    result = ingest_ok("analyzer", first, second, "--db", db)

    assert count(db, "analyzer_events") == 6
    assert parse_report(result.stdout)[2] == {"read": 7, "loaded": 6, "quarantined": 0, "duplicates": 1}


# -- session feedback ----------------------------------------------------------------------------
def test_session_feedback_from_legacy_sqlite(tmp_path: Path) -> None:
    records = [session_record(n) for n in range(5)]
    store = write_session_sqlite(tmp_path / "session_feedback.sqlite3", records, extra_value={"note": FREE_TEXT})
    db = tmp_path / "w.duckdb"

    ingest_ok("session-feedback", store, "--db", db)

    landed = {r["id"]: r for r in rows(db, "select * from raw.session_feedback")}
    assert set(landed) == {r["id"] for r in records}
    for position, record in enumerate(records, start=1):
        assert_session_landed(landed[record["id"]], record)
        assert landed[record["id"]]["insertion_order"] == position
    assert_one_clean_load_per_input(db, {"session_feedback.sqlite3": 5})
    assert places_containing(db, "FREE-TEXT") == []


def test_session_feedback_from_jsonl_export(tmp_path: Path) -> None:
    records = [session_record(n) for n in range(4)]
    records[2].pop("schema_version")  # absent means version 1
    lines = [{**r, "comment": FREE_TEXT} for r in records]
    source = write_jsonl(tmp_path / "session_feedback.jsonl", lines)
    db = tmp_path / "w.duckdb"

    ingest_ok("session-feedback", source, "--db", db)

    landed = {r["id"]: r for r in rows(db, "select * from raw.session_feedback")}
    assert set(landed) == {r["id"] for r in records}
    for record in records:
        assert_session_landed(landed[record["id"]], record)
    assert_one_clean_load_per_input(db, {"session_feedback.jsonl": 4})
    assert places_containing(db, "FREE-TEXT") == []


def test_session_feedback_from_postgres(tmp_path: Path, pg_database: str) -> None:
    records = [session_record(n) for n in range(6)]
    create_pg_session_feedback(pg_database, records, extra_value={"note": FREE_TEXT})
    db = tmp_path / "w.duckdb"

    result = ingest_ok("session-feedback", "--postgres", pg_database, "--db", db, fresh_process=True)

    landed = {r["id"]: r for r in rows(db, "select * from raw.session_feedback")}
    assert set(landed) == {r["id"] for r in records}
    for position, record in enumerate(records, start=1):
        assert_session_landed(landed[record["id"]], record)
        assert landed[record["id"]]["insertion_order"] == position
    (load,) = manifest(db)
    assert load["uri"] == f"{pg_database}#session_feedback"
    assert (load["rows_read"], load["rows_loaded"], load["rows_quarantined"], load["rows_duplicate"]) == (6, 6, 0, 0)
    assert parse_report(result.stdout)[2]["loaded"] == 6
    assert places_containing(db, "FREE-TEXT") == []


# -- reactions ---------------------------------------------------------------------------------
def _blob(path: Path, record: dict[str, Any], *, pretty: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, ensure_ascii=False, indent=2) if pretty else json.dumps(record, ensure_ascii=False)
    path.write_text(text + ("\n" if pretty else ""), encoding="utf-8")


def test_reactions_from_blob_folder(tmp_path: Path) -> None:
    payloads = [reaction_payload(n) for n in range(5)]
    payloads[3]["reaction"]["reaction"] = None  # a clear lands too
    payloads[4]["reaction"].update(origin="machine", confidence=0.72, text="model says fine")
    envelopes = {
        0: reaction_envelope(payloads[0]),
        1: reaction_envelope(payloads[1], tenant="tenant-b", project="proj-y", user_id="user-9"),
        3: reaction_envelope(payloads[3], user_id=None, tags=["artifact:turn.log.reaction", "track:B"]),
    }
    blobs = tmp_path / "blobs"
    _blob(blobs / "tenant-a" / "proj-x" / "conv-0" / "r0.json", envelopes[0], pretty=True)
    _blob(blobs / "tenant-b" / "r1.json", envelopes[1], pretty=False)
    bom_crlf = blobs / "bare" / "deep" / "deeper" / "r2.json"  # pretty-printed, with a BOM and CRLF line ends
    bom_crlf.parent.mkdir(parents=True)
    bom_crlf.write_bytes(b"\xef\xbb\xbf" + json.dumps(payloads[2], indent=2).replace("\n", "\r\n").encode())
    _blob(blobs / "tenant-a" / "proj-x" / "conv-1" / "r3.json", envelopes[3], pretty=False)
    _blob(blobs / "r4.json", payloads[4], pretty=False)
    (blobs / "README.txt").write_text("not a blob")
    db = tmp_path / "w.duckdb"

    result = ingest_ok("reactions", blobs, "--db", db)

    landed = {r["rn"]: r for r in rows(db, "select * from raw.turn_reactions")}
    assert set(landed) == {rn_of(p) for p in payloads}
    for n, payload in enumerate(payloads):
        assert_reaction_landed(landed[rn_of(payload)], payload, envelopes.get(n))
    (load,) = manifest(db)
    assert (load["rows_read"], load["rows_loaded"], load["rows_quarantined"], load["rows_duplicate"]) == (5, 5, 0, 0)
    assert parse_report(result.stdout)[2] == {"read": 5, "loaded": 5, "quarantined": 0, "duplicates": 0}


def test_reactions_from_jsonl_export(tmp_path: Path) -> None:
    payloads = [reaction_payload(n) for n in range(4)]
    envelopes = {n: reaction_envelope(payloads[n], tenant=f"tenant-{n}") for n in (0, 1, 3)}
    lines = [envelopes.get(n, payloads[n]) for n in range(4)]
    source = write_jsonl(tmp_path / "reactions.jsonl", lines)
    db = tmp_path / "w.duckdb"

    ingest_ok("reactions", source, "--db", db)

    landed = {r["rn"]: r for r in rows(db, "select * from raw.turn_reactions")}
    assert set(landed) == {rn_of(p) for p in payloads}
    for n, payload in enumerate(payloads):
        assert_reaction_landed(landed[rn_of(payload)], payload, envelopes.get(n))
    assert_one_clean_load_per_input(db, {"reactions.jsonl": 4})


def test_reactions_from_postgres_conv_messages(tmp_path: Path, pg_database: str) -> None:
    """The platform's index (conv_index.py:374-420 add_message, ctx_rag.py:1163-1186): reaction rows land in
    raw.reaction_index with the reaction read from `text`; turn logs and user messages of the same table do not;
    the legacy tag counts; tenant and project come from the blob path."""
    payloads = [reaction_payload(n) for n in range(4)]
    legacy = conv_row(payloads[2], tags=["kind:turn.log.reaction", f"turn:{payloads[2]['reaction']['turn_id']}"])
    not_a_reaction = conv_row(
        reaction_payload(50), tags=["artifact:turn.log", "turn:turn_x"], text="a turn log, not a reaction"
    )
    user_message = conv_row(reaction_payload(51), role="user", tags=["artifact:turn.log.reaction"])
    other_tenant = conv_row(payloads[1], tenant="tenant-b", project="proj y", user_id="user-7")
    reactions = [conv_row(payloads[0]), other_tenant, legacy, conv_row(payloads[3], user_type="paid")]
    create_pg_conv_messages(pg_database, [*reactions, not_a_reaction, user_message])
    db = tmp_path / "w.duckdb"

    ingest_ok("reactions", "--postgres", pg_database, "--db", db)

    landed = {r["rn"]: r for r in rows(db, "select * from raw.reaction_index")}
    expected_rns = {index_rn(r) for r in reactions if r is not other_tenant} | {
        index_rn(other_tenant, "tenant-b", "proj y")
    }
    assert set(landed) == expected_rns, "the three tagged reactions and the legacy-tagged one"
    for row, payload in zip(reactions, (payloads[0], payloads[1], payloads[2], payloads[3]), strict=True):
        found = landed[index_rn(row, *(("tenant-b", "proj y") if row is other_tenant else ()))]
        body = payload["reaction"]
        assert (found["turn_id"], found["origin"], found["reaction"], found["text"]) == (
            body["turn_id"], body["origin"], body["reaction"], body["text"],
        )  # fmt: skip
        assert found["conversation_id"] == payload["conversation_id"] and found["user_type"] == row["user_type"]
    assert (
        landed[index_rn(other_tenant, "tenant-b", "proj y")]["tenant"],
        landed[index_rn(other_tenant, "tenant-b", "proj y")]["project"],
    ) == ("tenant-b", "proj y")
    (load,) = manifest(db)
    database = pg_database.rsplit("/", 1)[1]
    assert load["uri"] == f"{pg_database}#{database}.kdcube_tenant_a_proj_x.conv_messages"
    assert (load["rows_read"], load["rows_loaded"], load["rows_quarantined"], load["rows_duplicate"]) == (4, 4, 0, 0)
    assert count(db, "quarantine") == 0


# -- workspace -----------------------------------------------------------------------------------
def assert_workspace_landed(db: Path, feedback: list[dict], sessions: list[dict], runs: list[dict]) -> None:
    for table, records in (
        ("workspace_feedback", feedback),
        ("workspace_sessions", sessions),
        ("workspace_eval_runs", runs),
    ):
        landed = {r["id"]: r for r in rows(db, f"select * from raw.{table}")}
        assert set(landed) == {r["id"] for r in records}, table
        for record in records:
            row = landed[record["id"]]
            for name, value in record.items():
                if name in ("context", "metadata", "results"):
                    assert json.loads(row[name]) == value, (table, name)
                elif name.endswith("_at"):
                    assert row[name] == utc(value), (table, name)
                else:
                    assert row[name] == value, (table, name)


def test_workspace_from_jsonl_folder(tmp_path: Path) -> None:
    feedback = [workspace_feedback(n) for n in range(4)]
    feedback[1].update(status="reviewed", reviewed_at="2026-05-03T10:00:00+02:00", reviewed_by_user_id="u-2")
    sessions = [workspace_session(n) for n in range(3)]
    runs = [eval_run(n) for n in range(2)]
    folder = tmp_path / "workspace"
    write_jsonl(folder / "feedback.jsonl", feedback)
    write_jsonl(folder / "sessions.jsonl", sessions)
    write_jsonl(folder / "eval_runs.jsonl", runs)
    db = tmp_path / "w.duckdb"

    result = ingest_ok("workspace", folder, "--db", db)

    assert_workspace_landed(db, feedback, sessions, runs)
    assert_one_clean_load_per_input(db, {"feedback.jsonl": 4, "sessions.jsonl": 3, "eval_runs.jsonl": 2})
    assert parse_report(result.stdout)[2]["loaded"] == 9


def test_workspace_from_postgres_without_eval_runs(tmp_path: Path, pg_database: str) -> None:
    feedback = [workspace_feedback(n) for n in range(3)]
    feedback[2].update(status="applied", reviewed_at="2026-05-04T11:00:00Z", review_notes="fixed in v2")
    sessions = [workspace_session(n) for n in range(2)]
    create_pg_workspace(pg_database, {"feedback": feedback, "sessions": sessions})
    db = tmp_path / "w.duckdb"

    ingest_ok("workspace", "--postgres", pg_database, "--db", db)

    assert_workspace_landed(db, feedback, sessions, [])
    assert {r["uri"] for r in manifest(db)} == {f"{pg_database}#feedback", f"{pg_database}#sessions"}
    assert_counts_add_up(db)
    assert count(db, "quarantine") == 0


def test_workspace_from_postgres_with_eval_runs(tmp_path: Path, pg_database: str) -> None:
    feedback = [workspace_feedback(n) for n in range(2)]
    sessions = [workspace_session(n) for n in range(2)]
    runs = [eval_run(n) for n in range(3)]
    create_pg_workspace(pg_database, {"feedback": feedback, "sessions": sessions, "eval_runs": runs})
    db = tmp_path / "w.duckdb"

    ingest_ok("workspace", "--postgres", pg_database, "--db", db)

    assert_workspace_landed(db, feedback, sessions, runs)
    assert len(manifest(db)) == 3
    assert count(db, "quarantine") == 0


# -- ingest --config -------------------------------------------------------------------------------
def test_config_file_loads_every_section(tmp_path: Path, pg_database: str) -> None:
    sources = tmp_path / "sources"
    write_jsonl(sources / "analyzer" / "feedback-store" / "feedback.jsonl", [analyzer_event(n) for n in range(3)])
    write_jsonl(sources / "analyzer" / "feedback-store" / "archive" / "feedback-20260101.jsonl", [analyzer_event(9)])
    sqlite_records = [session_record(n) for n in range(3)]
    (sources / "session-feedback").mkdir()
    write_session_sqlite(sources / "session-feedback" / "store.sqlite3", sqlite_records)
    pg_records = [session_record(n) for n in range(10, 14)]
    create_pg_session_feedback(pg_database, pg_records)
    payloads = [reaction_payload(n) for n in range(2)]
    _blob(sources / "reactions" / "c1" / "r0.json", reaction_envelope(payloads[0]), pretty=True)
    _blob(sources / "reactions" / "c2" / "r1.json", payloads[1], pretty=False)
    write_jsonl(sources / "workspace" / "feedback.jsonl", [workspace_feedback(n) for n in range(2)])
    write_jsonl(sources / "workspace" / "sessions.jsonl", [workspace_session(n) for n in range(2)])
    config = sources / "sources.toml"
    config.write_text(
        """
[[analyzer]]
path = "analyzer/feedback-store"
no_snippets = true

[[session_feedback]]
path = "session-feedback/store.sqlite3"

[[session_feedback]]
postgres_dsn_env = "TEST_SESSION_FEEDBACK_DSN"

[[reactions]]
path = "reactions"

[[workspace]]
path = "workspace"
""",
        encoding="utf-8",
    )
    db = tmp_path / "w.duckdb"

    result = ingest_ok(
        "--config", config, "--db", db, env=cli_env(TEST_SESSION_FEEDBACK_DSN=pg_database), fresh_process=True
    )

    assert count(db, "analyzer_events") == 4
    assert query(db, "select count(*) from raw.analyzer_events where user_message_snippet is not null") == [(0,)]
    assert {r[0] for r in query(db, "select id from raw.session_feedback")} == {
        r["id"] for r in sqlite_records + pg_records
    }
    assert count(db, "turn_reactions") == 2
    assert count(db, "workspace_feedback") == 2
    assert count(db, "workspace_sessions") == 2
    loads = manifest(db)
    assert len(loads) == 7  # 2 analyzer files, sqlite, postgres, blob folder, 2 workspace files
    assert f"{pg_database}#session_feedback" in {r["uri"] for r in loads}
    assert_counts_add_up(db)
    assert parse_report(result.stdout)[2] == {"read": 17, "loaded": 17, "quarantined": 0, "duplicates": 0}


def test_config_with_a_dsn_written_in_the_file_is_refused(tmp_path: Path, pg_database: str) -> None:
    config = tmp_path / "sources.toml"
    secret_dsn = pg_database.replace("://postgres@", "://postgres:hunter2@")
    config.write_text(f'[[session_feedback]]\npostgres_dsn = "{secret_dsn}"\n', encoding="utf-8")
    db = tmp_path / "w.duckdb"

    result = run_cli("ingest", "--config", config, "--db", db)

    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "postgres_dsn_env" in line and "environment variable" in line
    assert "hunter2" not in result.stderr + result.stdout
    assert not db.exists() or count(db, "load_manifest") == 0


@pytest.mark.parametrize("section", ["analyzer", "reactions", "workspace"])
def test_config_relative_paths_resolve_against_the_config_file(tmp_path: Path, section: str) -> None:
    files = {
        "analyzer": ("feedback.jsonl", [analyzer_event(0)]),
        "reactions": ("reactions.jsonl", [reaction_payload(0)]),
        "workspace": ("feedback.jsonl", [workspace_feedback(0)]),
    }
    name, records = files[section]
    write_jsonl(tmp_path / "conf" / "data" / name, records)
    config = tmp_path / "conf" / "sources.toml"
    config.write_text(f'[[{section}]]\npath = "data/{name}"\n', encoding="utf-8")
    db = tmp_path / "w.duckdb"

    result = ingest_ok("--config", config, "--db", db)

    assert parse_report(result.stdout)[2]["loaded"] == 1
