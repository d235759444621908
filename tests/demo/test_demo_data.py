"""The demo data generator: deterministic, realistic, and exactly in the upstream formats.

Every test reads the files the generator wrote (no peeking at its internals), the way
the ingest will.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import re
import sqlite3
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from demo import (
    IMPROVING_SKILL,
    NEW_SKILL,
    TENANTS,
    WORSENING_SKILL,
    demo_tenant_id,
    generate,
    write_analyzer_jsonl,
)
from demo import reactions as demo_reactions
from tests.support.demo import (
    Demo,
    all_analyzer_events,
    all_timestamps,
    archive_files,
    blob_paths,
    correction_rate,
    file_bytes,
    parse_ts,
    reaction_envelopes,
    read_jsonl,
    session_feedback_sqlite_rows,
    workspace_rows,
)
from warehouse.contracts import (
    ANALYZER_EVENTS,
    CORRECTION_TYPES,
    DIMENSIONS,
    FEEDBACK_RATINGS,
    FEEDBACK_SOURCE_TYPES,
    FEEDBACK_STATUSES,
    REACTIONS,
    SESSION_FEEDBACK,
    SESSION_SOURCES,
    WORKSPACE_EVAL_RUNS,
    WORKSPACE_FEEDBACK,
    WORKSPACE_SESSIONS,
)

AS_OF = dt.date(2026, 5, 1)
AS_OF_TS = dt.datetime(2026, 5, 1, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
# Upstream's field order is the contracts' (the session feedback export leaves out the two SQLite-only fields).
ANALYZER_KEYS = ANALYZER_EVENTS.columns
SESSION_FEEDBACK_KEYS = [key for key in SESSION_FEEDBACK.columns if key not in ("insertion_order", "recorded_date")]
WORKSPACE_FEEDBACK_KEYS = WORKSPACE_FEEDBACK.columns
WORKSPACE_SESSION_KEYS = WORKSPACE_SESSIONS.columns
EVAL_RUN_KEYS = WORKSPACE_EVAL_RUNS.columns
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
UUID5 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
TENANT_SEED = Path(__file__).resolve().parents[2] / "seeds" / "tenants.csv"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    out = tmp_path_factory.mktemp("demo")
    messages: list[str] = []
    counts = generate(out, seed=7, scale=0.3, as_of=AS_OF, progress=messages.append)
    assert messages, "progress is reported"
    return Demo(out, counts)


# ---------------------------------------------------------------------------------------
# Reading the files back
# ---------------------------------------------------------------------------------------


def test_same_seed_scale_and_as_of_give_byte_identical_files(tmp_path: Path) -> None:
    first = generate(tmp_path / "a", seed=3, scale=0.1, as_of=AS_OF)
    second = generate(tmp_path / "b", seed=3, scale=0.1, as_of=AS_OF)
    assert first == second
    a, b = file_bytes(tmp_path / "a"), file_bytes(tmp_path / "b")
    assert a.keys() == b.keys()
    assert [name for name in a if a[name] != b[name]] == []
    # writing again over an existing demo folder gives the same files too
    generate(tmp_path / "a", seed=3, scale=0.1, as_of=AS_OF)
    assert file_bytes(tmp_path / "a") == b


def test_another_seed_gives_other_data(tmp_path: Path) -> None:
    generate(tmp_path / "a", seed=3, scale=0.05, as_of=AS_OF)
    generate(tmp_path / "b", seed=4, scale=0.05, as_of=AS_OF)
    active = Path("analyzer/feedback-store/feedback.jsonl")
    assert (tmp_path / "a" / active).read_bytes() != (tmp_path / "b" / active).read_bytes()
    # ... but the same workspace tenants, whose ids seeds/tenants.csv lists
    feedback = [read_jsonl(tmp_path / run / "workspace" / "feedback.jsonl")[0] for run in ("a", "b")]
    assert {row["id"] for row in feedback[0]}.isdisjoint(row["id"] for row in feedback[1])
    assert {row["tenant_id"] for row in feedback[0]} == {row["tenant_id"] for row in feedback[1]}


def test_scale_changes_volume(tmp_path: Path, demo: Demo) -> None:
    small = generate(tmp_path / "small", seed=7, scale=0.1, as_of=AS_OF)
    for source in ("analyzer_events", "session_feedback", "turn_reactions", "workspace_feedback"):
        assert demo.counts[source] > 2 * small[source], source
    assert demo.counts["analyzer_events"] == 15_000
    assert small["analyzer_events"] == 5_000


def test_counts_are_the_clean_records_in_the_files(demo: Demo) -> None:
    assert len(all_analyzer_events(demo)) == demo.counts["analyzer_events"]
    export, _ = read_jsonl(demo.out / "session-feedback" / "session_feedback_export.jsonl")
    ids = {row["id"] for row in session_feedback_sqlite_rows(demo)} | {row["id"] for row in export}
    assert len(ids) == demo.counts["session_feedback"] + 1  # the bad export line has its own id
    rns = {envelope["payload"]["meta"]["rn"] for envelope in reaction_envelopes(demo.out)}
    assert len(rns) == demo.counts["turn_reactions"] + 1  # plus the confidence-1.5 blob
    assert len(workspace_rows(demo, "feedback")) == demo.counts["workspace_feedback"]
    assert len(workspace_rows(demo, "sessions")) == demo.counts["workspace_sessions"]
    assert len(workspace_rows(demo, "eval_runs")) == demo.counts["workspace_eval_runs"]


def test_scale_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="scale"):
        generate(tmp_path, scale=0, as_of=AS_OF)


# ---------------------------------------------------------------------------------------
# Time frame
# ---------------------------------------------------------------------------------------


def test_nothing_after_as_of_and_about_200_days_of_history(demo: Demo) -> None:
    earliest: dict[str, dt.datetime] = {}
    for source, text in all_timestamps(demo):
        assert text.endswith("Z"), (source, text)
        ts = parse_ts(text)
        assert ts < AS_OF_TS, (source, text)
        earliest[source] = min(earliest.get(source, ts), ts)
    for source in ("analyzer", "session_feedback sqlite", "reactions", "workspace feedback"):
        assert AS_OF_TS - 200 * DAY <= earliest[source] < AS_OF_TS - 190 * DAY, source


def test_weekends_are_quieter(demo: Demo) -> None:
    per_weekday = Counter(parse_ts(e["timestamp"]).weekday() for e in all_analyzer_events(demo).values())
    weekday_mean = sum(per_weekday[d] for d in range(5)) / 5
    weekend_mean = (per_weekday[5] + per_weekday[6]) / 2
    assert weekend_mean < 0.5 * weekday_mean


def test_active_file_holds_the_last_90_days_and_the_archive_the_rest(demo: Demo) -> None:
    cutoff = AS_OF_TS - 90 * DAY
    archived: dict[str, dt.date] = {}
    files = archive_files(demo)
    assert len(files) >= 10
    for path in files:
        run_date = dt.datetime.strptime(path.stem, "feedback-%Y%m%d").date()
        assert run_date <= AS_OF
        run_cutoff = dt.datetime.combine(run_date, dt.time(), dt.UTC) - 90 * DAY
        for event in read_jsonl(path)[0]:
            assert parse_ts(event["timestamp"]) < run_cutoff
            if path != files[0]:  # the oldest run archived everything older
                assert parse_ts(event["timestamp"]) >= run_cutoff - 7 * DAY
            archived[event["event_id"]] = run_date
    active, _ = read_jsonl(demo.store / "feedback.jsonl")
    left_behind = [e for e in active if parse_ts(e["timestamp"]) < cutoff]
    # an interrupted archive run left its last chunk in the active file as well
    assert len(left_behind) == 40
    assert {archived[e["event_id"]] for e in left_behind} == {AS_OF}
    assert not {e["event_id"] for e in active if parse_ts(e["timestamp"]) >= cutoff} & archived.keys()


# ---------------------------------------------------------------------------------------
# Analyzer events
# ---------------------------------------------------------------------------------------


def test_every_analyzer_line_is_a_complete_event_but_one_truncated_line(demo: Demo) -> None:
    fractions = 0
    for path in [*archive_files(demo), demo.store / "feedback.jsonl"]:
        events, bad = read_jsonl(path)
        if path.name == "feedback.jsonl":
            assert len(bad) == 1 and bad[0].startswith('{"event_id":')
        else:
            assert bad == []
        for event in events:
            assert list(event) == ANALYZER_KEYS
            expected_id = hashlib.sha256(f"{event['invocation_uuid']}:{event['skill_id']}".encode()).hexdigest()
            assert event["event_id"] == expected_id[:16]
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z", event["timestamp"])
            fractions += "." in event["timestamp"]
            assert len(event["user_message_snippet"]) <= 200
            assert event["turns_to_feedback"] in (1, 2, 3)
            assert all(isinstance(tool, str) for tool in event["ai_tools_used"])
            outcome = event["outcome"]
            if outcome == "correction":
                assert event["confidence"] == 0.9
                assert event["correction_type"] in set(CORRECTION_TYPES) - {"partial"}
                assert event["dimension_hint"] in DIMENSIONS
            elif outcome == "partial":
                assert event["confidence"] == 0.7
                assert event["correction_type"] == "partial"
                assert event["dimension_hint"] in DIMENSIONS
            else:
                assert outcome == "acceptance"
                assert event["confidence"] in (0.8, 0.6)
                assert event["correction_type"] is None and event["dimension_hint"] is None
    assert fractions > 0


def test_analyzer_vocabulary_is_varied(demo: Demo) -> None:
    events = list(all_analyzer_events(demo).values())
    assert len({e["skill_id"] for e in events}) >= 10
    assert {e["dimension_hint"] for e in events} - {None} == set(DIMENSIONS)
    assert {e["correction_type"] for e in events} == {*CORRECTION_TYPES, None}
    assert any(e["user_message_snippet"] == "" for e in events)
    assert any(e["ai_tools_used"] == [] for e in events)
    assert len({e["session_id"] for e in events}) < len(events)


def test_worsening_and_improving_skills_really_move(demo: Demo) -> None:
    recent: dict[str, list[dict]] = defaultdict(list)
    prior: dict[str, list[dict]] = defaultdict(list)
    for event in all_analyzer_events(demo).values():
        ts = parse_ts(event["timestamp"])
        if AS_OF_TS - 30 * DAY <= ts <= AS_OF_TS:
            recent[event["skill_id"]].append(event)
        elif AS_OF_TS - 60 * DAY <= ts < AS_OF_TS - 30 * DAY:
            prior[event["skill_id"]].append(event)
    trends = {
        skill: correction_rate(recent[skill]) - correction_rate(prior[skill])
        for skill in recent
        if len(recent[skill]) >= 5 and len(prior[skill]) >= 5
    }
    assert trends[WORSENING_SKILL] > 0.15
    assert trends[IMPROVING_SKILL] < -0.15
    stable = {skill: trend for skill, trend in trends.items() if skill not in (WORSENING_SKILL, IMPROVING_SKILL)}
    assert len(stable) >= 8
    assert all(abs(trend) <= 0.05 for trend in stable.values()), stable
    assert recent[NEW_SKILL] and not prior.get(NEW_SKILL)  # too new for a trend


def test_non_ascii_text_is_written_as_is(demo: Demo) -> None:
    active = (demo.store / "feedback.jsonl").read_bytes()
    assert "不对".encode() in active or "可以".encode() in active
    assert "👍".encode() in active or "😕".encode() in active
    assert "ç".encode() in active or "é".encode() in active
    for path in [
        demo.store / "feedback.jsonl",
        demo.out / "workspace" / "feedback.jsonl",
        demo.out / "workspace" / "sessions.jsonl",
    ]:
        assert b"\\u" not in path.read_bytes(), path
    blobs = [path.read_bytes() for path in blob_paths(demo.out)]
    assert not any(b"\\u" in blob for blob in blobs)
    assert any("很好".encode() in blob or "😤".encode() in blob for blob in blobs)


# ---------------------------------------------------------------------------------------
# Session feedback
# ---------------------------------------------------------------------------------------


def test_session_feedback_sqlite_has_the_legacy_table(demo: Demo) -> None:
    db = sqlite3.connect(demo.out / "session-feedback" / "session_feedback.sqlite3")
    try:
        columns = [row[1] for row in db.execute("pragma table_info(session_feedback)")]
        ddl = db.execute("select sql from sqlite_master where name = 'session_feedback'").fetchone()[0]
    finally:
        db.close()
    # modality lives only inside `value`, as upstream keeps it
    column_keys = [key for key in SESSION_FEEDBACK_KEYS if key != "modality"]
    assert columns == [
        "insertion_order",
        *column_keys[:4],
        "recorded_date",
        *column_keys[4:],
        "value",
    ]
    assert "AUTOINCREMENT" in ddl and "CHECK (label IN" in ddl
    rows = session_feedback_sqlite_rows(demo)
    assert len(rows) > 1000
    assert [row["insertion_order"] for row in rows] == list(range(1, len(rows) + 1))
    for row in rows:
        value = json.loads(row["value"])
        assert list(value) == SESSION_FEEDBACK_KEYS
        assert {key: value[key] for key in column_keys} == {key: row[key] for key in column_keys}
        assert value["modality"] in ("text", "voice")
        assert value["modality"] == "text" or row["source"] == "api_end"
        assert row["recorded_date"] == row["recorded_at"][:10]
        assert SHA256_HEX.fullmatch(row["session_id_opaque"])
        assert UUID4.fullmatch(row["id"])
    assert {json.loads(row["value"])["modality"] for row in rows} == {"text", "voice"}


def test_session_feedback_export_overlaps_sqlite_and_has_one_raw_session_id(demo: Demo) -> None:
    sqlite_rows = session_feedback_sqlite_rows(demo)
    export, bad = read_jsonl(demo.out / "session-feedback" / "session_feedback_export.jsonl")
    assert bad == []
    assert all(list(row) == SESSION_FEEDBACK_KEYS for row in export)
    raw = [row for row in export if not SHA256_HEX.fullmatch(row["session_id_opaque"])]
    assert [row["session_id_opaque"] for row in raw] == ["alice-s1"]
    assert len({row["id"] for row in sqlite_rows} & {row["id"] for row in export}) == 300
    # the SQLite file holds the older history, the export the newer
    assert max(row["recorded_at"] for row in sqlite_rows) < max(row["recorded_at"] for row in export)
    assert min(row["recorded_at"] for row in sqlite_rows) < min(row["recorded_at"] for row in export)


def test_session_feedback_labels_surfaces_and_turns(demo: Demo) -> None:
    export, _ = read_jsonl(demo.out / "session-feedback" / "session_feedback_export.jsonl")
    records = [dict(row) for row in session_feedback_sqlite_rows(demo)] + export
    by_source: dict[str, Counter] = defaultdict(Counter)
    for record in records:
        by_source[record["source"]][record["label"]] += 1
    assert set(by_source) == set(SESSION_SOURCES)
    positive_rates = {
        source: labels["positive"] / (labels["positive"] + labels["negative"]) for source, labels in by_source.items()
    }
    assert max(positive_rates.values()) - min(positive_rates.values()) > 0.03
    labels = Counter(record["label"] for record in records)
    assert labels["positive"] > labels["negative"] > 0 and labels["skip"] > 0
    incognito = sum(record["user_id_or_null"] is None for record in records) / len(records)
    assert 0.1 < incognito < 0.2
    turns = [record["turn_count_at_end"] for record in records]
    assert min(turns) == 1 and max(turns) == 60
    assert all(record["schema_version"] == 1 for record in records)


# ---------------------------------------------------------------------------------------
# Reactions
# ---------------------------------------------------------------------------------------


def test_reaction_blobs_are_envelopes_with_the_documented_shape(demo: Demo) -> None:
    paths = blob_paths(demo.out)
    assert not (demo.out / "reactions" / "reactions_export.jsonl").exists()
    texts = [path.read_text(encoding="utf-8") for path in paths]
    assert any(text.startswith('{\n  "tenant"') for text in texts)
    assert any(text.startswith('{"tenant"') for text in texts)
    tenants: dict[str, set[str]] = defaultdict(set)
    for path, text in zip(paths, texts, strict=True):
        envelope = json.loads(text)
        assert list(envelope) == ["tenant", "project", "user_id", "tags", "payload"]
        payload = envelope["payload"]
        assert list(payload) == ["reaction", "meta", "conversation_id", "bundle_id"]
        reaction, meta = payload["reaction"], payload["meta"]
        assert list(reaction) == ["turn_id", "text", "confidence", "ts", "reaction", "origin"]
        assert list(meta) == ["rn", "turn_id", "track_id", "user_type", "kind"]
        assert path.relative_to(demo.out / "reactions" / "blobs").parts[:3] == (
            envelope["tenant"],
            envelope["project"],
            payload["conversation_id"],
        )
        turn_id = reaction["turn_id"]
        assert meta["turn_id"] == turn_id and meta["kind"] == "turn.log.reaction"
        assert meta["rn"].startswith(
            f"ef:{envelope['tenant']}:{envelope['project']}:{payload['conversation_id']}:{turn_id}:artifact:"
        )
        tags = envelope["tags"]
        assert tags[0] in ("artifact:turn.log.reaction", "kind:turn.log.reaction")
        assert tags[1:3] == [f"turn:{turn_id}", f"origin:{reaction['origin']}"]
        assert tags[3:] in ([], [f"track:{meta['track_id']}"])
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", reaction["ts"])
        assert reaction["reaction"] in (*REACTIONS, None)
        tenants[envelope["tenant"]].add(envelope["project"])
    assert len(tenants) >= 3 and all(len(projects) >= 2 for projects in tenants.values())


def test_reactions_cover_replacements_clears_machine_thresholds_and_legacy_tags(demo: Demo) -> None:
    envelopes = list(reaction_envelopes(demo.out))
    reactions = [e["payload"]["reaction"] for e in envelopes]
    assert [r["confidence"] for r in reactions if not 0 <= r["confidence"] <= 1] == [1.5]
    users = [r for r in reactions if r["origin"] == "user"]
    machines = [r for r in reactions if r["origin"] == "machine" and r["confidence"] <= 1]
    assert all(r["confidence"] == 1.0 for r in users)
    confidences = {r["confidence"] for r in machines}
    assert {0.7, 0.69} <= confidences
    assert min(confidences) < 0.5 and max(confidences) > 0.95
    assert any(r["reaction"] is None for r in users)
    assert any(r["text"] is None for r in reactions) and any(r["text"] for r in reactions)
    user_reactions_per_turn = Counter(
        (e["payload"]["conversation_id"], e["payload"]["reaction"]["turn_id"])
        for e in envelopes
        if e["payload"]["reaction"]["origin"] == "user"
    )
    assert max(user_reactions_per_turn.values()) >= 2
    legacy = sum(e["tags"][0] == "kind:turn.log.reaction" for e in envelopes) / len(envelopes)
    assert 0.01 < legacy < 0.06
    assert len({e["payload"]["meta"]["rn"] for e in envelopes}) == len(envelopes)


def test_many_reactions_go_to_an_export_beside_capped_blob_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo_reactions, "BLOB_FILES_ALL_UP_TO", 500)
    monkeypatch.setattr(demo_reactions, "BLOB_FILE_CAP", 300)
    counts = generate(tmp_path, seed=1, scale=0.1, as_of=AS_OF)
    blobs = blob_paths(tmp_path)
    export, bad = read_jsonl(tmp_path / "reactions" / "reactions_export.jsonl")
    assert 200 <= len(blobs) <= 301 and bad == []
    assert len(blobs) + len(export) == counts["turn_reactions"] + 1
    assert all(list(envelope) == ["tenant", "project", "user_id", "tags", "payload"] for envelope in export)
    config = tomllib.loads((tmp_path / "sources.toml").read_text(encoding="utf-8"))
    assert {"path": "reactions/reactions_export.jsonl"} in config["reactions"]


# ---------------------------------------------------------------------------------------
# Workspace
# ---------------------------------------------------------------------------------------


def test_workspace_feedback_rows(demo: Demo) -> None:
    rows = workspace_rows(demo, "feedback")
    assert all(list(row) == WORKSPACE_FEEDBACK_KEYS for row in rows)
    assert {row["source_type"] for row in rows} == set(FEEDBACK_SOURCE_TYPES)
    assert {row["rating"] for row in rows} == set(FEEDBACK_RATINGS)
    assert {row["status"] for row in rows} == set(FEEDBACK_STATUSES)
    for row in rows:
        assert UUID4.fullmatch(row["id"]) and UUID5.fullmatch(row["tenant_id"])
        assert isinstance(row["context"], dict)
        if row["status"] == "pending":
            assert row["reviewed_at"] is None and row["reviewed_by_agent_id"] is None
            assert row["reviewed_by_user_id"] is None
        else:
            assert row["reviewed_at"] >= row["created_at"]
            assert (row["reviewed_by_agent_id"] is None) != (row["reviewed_by_user_id"] is None)
    pending_ages = [AS_OF_TS - parse_ts(row["created_at"]) for row in rows if row["status"] == "pending"]
    assert min(pending_ages) < 2 * DAY and max(pending_ages) > 30 * DAY
    assert len({row["tenant_id"] for row in rows}) >= 3


def test_golden_sessions_replays_and_eval_runs(demo: Demo) -> None:
    sessions = workspace_rows(demo, "sessions")
    assert all(list(row) == WORKSPACE_SESSION_KEYS for row in sessions)
    golden = {row["id"]: row for row in sessions if "golden" in row["metadata"]}
    sets = Counter(row["metadata"]["golden"]["set"] for row in golden.values())
    assert len(sets) >= 2 and all(6 <= n <= 10 for n in sets.values())
    for row in golden.values():
        assert set(row["metadata"]["golden"]) == {"set", "promoted_at", "promoted_by", "snapshot"}
    replays = [row for row in sessions if "eval_source" in row["metadata"]]
    assert {row["metadata"]["eval_source"] for row in replays} == golden.keys()
    assert len([row for row in sessions if not {"golden", "eval_source"} & row["metadata"].keys()]) > 100

    cells: dict[tuple[str, str], list[tuple[str, bool]]] = defaultdict(list)
    for row in replays:
        result = row["metadata"]["eval_result"]
        assert set(result) == {"session_type", "dimensions", "overall_accuracy", "divergences"}
        assert 0 <= result["overall_accuracy"] <= 1
        passed = all(d["passed"] for d in result["dimensions"].values())
        assert passed == (result["divergences"] == [])
        cells[(row["metadata"]["eval_source"], row["agent_id"])].append((row["created_at"], passed))
    assert len({agent for _, agent in cells}) >= 3
    histories = [[passed for _, passed in sorted(runs)] for runs in cells.values()]
    assert min(len(history) for history in histories) >= 8
    assert any(h[-1] is False and h[-2] is True for h in histories), "a cell regresses"
    assert any(h[-1] is True and h[-2] is False for h in histories), "a cell gets fixed"
    assert any(sum(a != b for a, b in zip(h, h[1:], strict=False)) >= 4 for h in histories), "a flaky cell"

    runs = workspace_rows(demo, "eval_runs")
    assert all(list(row) == EVAL_RUN_KEYS for row in runs)
    replays_by_run: dict[str, list[dict]] = defaultdict(list)
    for row in replays:
        replays_by_run[row["metadata"]["eval_run_id"]].append(row)
    for run in runs:
        run_replays = replays_by_run[run["id"]]
        passed = sum(all(d["passed"] for d in r["metadata"]["eval_result"]["dimensions"].values()) for r in run_replays)
        assert run["golden_session_count"] == len(run_replays) == len(run["results"]["bySession"])
        assert (run["passed_count"], run["failed_count"]) == (passed, len(run_replays) - passed)
        assert {r["agent_id"] for r in run_replays} == {run["agent_id"]}
        assert {golden[r["metadata"]["eval_source"]]["metadata"]["golden"]["set"] for r in run_replays} == {
            run["set_name"]
        }
    assert len({run["started_at"][:10] for run in runs}) >= 8


def test_workspace_tenant_ids_derive_from_the_names_and_the_seed_maps_both_sources(demo: Demo) -> None:
    """The reactions name the demo's tenants, the workspace gives each a uuid5 of its name; the seed
    seeds/tenants.csv maps exactly these 4 x 2 ids, both ids of a tenant to one key with one name."""
    workspace_ids = {demo_tenant_id(name): name for name in TENANTS}
    assert len(workspace_ids) == len(TENANTS) == 4
    assert {envelope["tenant"] for envelope in reaction_envelopes(demo.out)} == set(TENANTS)
    assert {row["tenant_id"] for row in workspace_rows(demo, "feedback")} == workspace_ids.keys()
    for table in ("sessions", "eval_runs"):
        assert {row["tenant_id"] for row in workspace_rows(demo, table)} <= workspace_ids.keys(), table

    with TENANT_SEED.open(encoding="utf-8", newline="") as seed:
        rows = list(csv.DictReader(seed))
    assert [list(row) for row in rows[:1]] == [["source_system", "source_tenant_id", "tenant_key", "tenant_name"]]
    keys = {(row["source_system"], row["source_tenant_id"]): row["tenant_key"] for row in rows}
    assert len(keys) == len(rows), "one row per (source_system, source_tenant_id)"
    assert keys == {
        **{("turn_reactions", name): name for name in TENANTS},
        **{("workspace", tenant_id): name for tenant_id, name in workspace_ids.items()},
    }
    names = defaultdict(set)
    for row in rows:
        names[row["tenant_key"]].add(row["tenant_name"])
    assert all(len(tenant_names) == 1 and "" not in tenant_names for tenant_names in names.values()), names


# ---------------------------------------------------------------------------------------
# Config and the benchmark writer
# ---------------------------------------------------------------------------------------


def test_sources_toml_names_every_source_and_every_path_exists(demo: Demo) -> None:
    text = (demo.out / "sources.toml").read_text(encoding="utf-8")
    assert "# Load everything with: feedback-analytics ingest --config" in text
    assert '# postgres_dsn_env = "SESSION_FEEDBACK_PG_DSN"' in text
    config = tomllib.loads(text)
    assert set(config) == {"analyzer", "session_feedback", "reactions", "workspace"}
    paths = [entry["path"] for entries in config.values() for entry in entries]
    assert paths == [
        "analyzer/feedback-store",
        "session-feedback/session_feedback.sqlite3",
        "session-feedback/session_feedback_export.jsonl",
        "reactions/blobs",
        "workspace",
    ]
    assert all((demo.out / path).exists() for path in paths)


def test_write_analyzer_jsonl_writes_exactly_n_clean_events(tmp_path: Path) -> None:
    path = tmp_path / "bench" / "events.jsonl"
    write_analyzer_jsonl(path, 3_000, seed=5, as_of=AS_OF, days=30)
    events, bad = read_jsonl(path)
    assert bad == [] and len(events) == 3_000
    assert len({event["event_id"] for event in events}) == 3_000
    assert all(list(event) == ANALYZER_KEYS for event in events)
    times = [parse_ts(event["timestamp"]) for event in events]
    assert times == sorted(times)
    assert min(times) >= AS_OF_TS - 30 * DAY and max(times) < AS_OF_TS
    again = tmp_path / "again.jsonl"
    write_analyzer_jsonl(again, 3_000, seed=5, as_of=AS_OF, days=30)
    assert again.read_bytes() == path.read_bytes()
    empty = tmp_path / "empty.jsonl"
    write_analyzer_jsonl(empty, 0, as_of=AS_OF)
    assert empty.read_bytes() == b""
