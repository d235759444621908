"""Source folders never follow a symlink; control characters of data and file names never reach a terminal or
a log raw.

Real folders, real symlinks (to a folder and a file elsewhere, and to /etc/passwd), the real command line:
`ingest`, `quarantine`, `nightly`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tests.support.ingest import (
    analyzer_event,
    cli_env,
    query,
    reaction_envelope,
    reaction_payload,
    run_cli,
    workspace_feedback,
    write_jsonl,
)

# what would recolour, retitle or rewrite a terminal, and forge a line of a log
HOSTILE = "\x1b[31m\x1b]0;pwned\x07\r\u202e"
RAW_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069]")


def outside_folder(tmp_path: Path) -> Path:
    """A folder elsewhere that holds data of every kind: nothing of it may be read through a symlink."""
    outside = tmp_path / "elsewhere"
    write_jsonl(outside / "feedback.jsonl", [analyzer_event(n, session_id="outside") for n in range(100, 105)])
    write_jsonl(outside / "feedback-1.jsonl", [workspace_feedback(n) for n in range(100, 105)])
    for n in range(100, 103):
        (outside / f"blob-{n}.json").write_text(json.dumps(reaction_envelope(reaction_payload(n))))
    return outside


def test_an_analyzer_store_does_not_follow_symlinks(tmp_path: Path) -> None:
    outside = outside_folder(tmp_path)
    store = tmp_path / "store"
    write_jsonl(store / "feedback.jsonl", [analyzer_event(n) for n in range(3)])
    (store / "linked.jsonl").symlink_to(outside / "feedback.jsonl")
    (store / "passwd.jsonl").symlink_to("/etc/passwd")
    (store / "archive").symlink_to(outside)  # a whole folder elsewhere
    db = tmp_path / "w.duckdb"
    result = run_cli("ingest", "analyzer", store, "--db", db)
    assert result.returncode == 0, result.stderr
    assert query(db, "select count(*), count(*) filter (where session_id = 'outside') from raw.analyzer_events") == [
        (3, 0)
    ]
    assert query(db, "select count(*) from raw.quarantine") == [(0,)]
    uris = {uri for (uri,) in query(db, "select uri from raw.load_manifest")}
    assert uris == {str((store / "feedback.jsonl").resolve())}
    assert "3 symlink(s) in the source folders skipped: symlinks are not followed" in result.stderr


def test_a_reaction_blob_tree_does_not_follow_symlinks(tmp_path: Path) -> None:
    outside = outside_folder(tmp_path)
    tree = tmp_path / "blobs" / "cb" / "tenants" / "tenant-a"
    tree.mkdir(parents=True)
    for n in range(2):
        (tree / f"blob-{n}.json").write_text(json.dumps(reaction_envelope(reaction_payload(n))))
    (tree / "elsewhere").symlink_to(outside)
    (tree / "one.json").symlink_to(outside / "blob-100.json")
    (tree / "passwd.json").symlink_to("/etc/passwd")
    db = tmp_path / "w.duckdb"
    result = run_cli("ingest", "reactions", tmp_path / "blobs", "--db", db)
    assert result.returncode == 0, result.stderr
    assert query(db, "select count(*) from raw.turn_reactions") == [(2,)]
    assert query(db, "select count(*) from raw.quarantine") == [(0,)], "a symlinked blob was read"
    assert "3 symlink(s) in the source folders skipped" in result.stderr


def test_a_workspace_folder_does_not_follow_symlinks(tmp_path: Path) -> None:
    outside = outside_folder(tmp_path)
    folder = tmp_path / "workspace"
    write_jsonl(folder / "feedback.jsonl", [workspace_feedback(n) for n in range(2)])
    (folder / "feedback-2.jsonl").symlink_to(outside / "feedback-1.jsonl")
    db = tmp_path / "w.duckdb"
    result = run_cli("ingest", "workspace", folder, "--db", db)
    assert result.returncode == 0, result.stderr
    assert query(db, "select count(*) from raw.workspace_feedback") == [(2,)]
    assert "1 symlink(s) in the source folders skipped" in result.stderr


def test_a_folder_of_nothing_but_symlinks_says_so(tmp_path: Path) -> None:
    outside = outside_folder(tmp_path)
    store = tmp_path / "store"
    store.mkdir()
    (store / "feedback.jsonl").symlink_to(outside / "feedback.jsonl")
    result = run_cli("ingest", "analyzer", store, "--db", tmp_path / "w.duckdb")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"error: no analyzer files in {store}: expected feedback.jsonl and/or archive/feedback-YYYYMMDD.jsonl "
        "(1 symlink(s) skipped: symlinks are not followed)"
    ]


def hostile_store(tmp_path: Path) -> tuple[Path, Path]:
    """A store whose file is named with a newline and escape sequences, holding good events and events whose
    values carry them (quarantined)."""
    store = tmp_path / "store"
    name = f"feed\n2026-01-01T00:00:00Z INFO forged{HOSTILE}.jsonl"
    bad = [analyzer_event(n, timestamp=f"{HOSTILE}\n2026", outcome=HOSTILE) for n in range(3, 5)]
    return store, write_jsonl(store / name, [analyzer_event(0), *bad, f'{{"event_id": "{HOSTILE}\\n"'])


def assert_printable(text: str) -> None:
    assert not RAW_CONTROLS.findall(text), f"raw control characters reached the output: {text!r}"


def test_ingest_and_quarantine_print_no_control_characters(tmp_path: Path) -> None:
    store, file = hostile_store(tmp_path)
    db = tmp_path / "w.duckdb"
    ingested = run_cli("ingest", "analyzer", store, "--db", db)
    assert ingested.returncode == 0, ingested.stderr
    assert query(db, "select count(*) from raw.quarantine") == [(3,)]
    assert_printable(ingested.stdout + ingested.stderr)
    lines = ingested.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("analyzer_events ") and lines[1].startswith("total: ")
    assert "\\n2026-01-01T00:00:00Z INFO forged\\x1b[31m\\x1b]0;pwned\\x07\\r\\u202e.jsonl" in lines[0]
    listed = run_cli("quarantine", "--db", db)
    assert listed.returncode == 0, listed.stderr
    assert_printable(listed.stdout + listed.stderr)
    rows = listed.stdout.splitlines()
    assert len(rows) == 3 and all(re.match(r"^[0-9a-f-]{12}  /", row) for row in rows), rows
    assert all("forged\\x1b[31m" in row for row in rows), rows


def test_the_nightly_log_stays_one_record_per_line(tmp_path: Path) -> None:
    """A file whose every row is quarantined fails the nightly's ingest step with its name and first reason:
    on stdout and in the log, escaped; every line of the log starts with its time and level."""
    store, _ = hostile_store(tmp_path)
    only_bad = store / f"bad\n2026-01-01T00:00:00Z INFO nightly ok{HOSTILE}.jsonl"
    write_jsonl(only_bad, [analyzer_event(n, timestamp=HOSTILE) for n in range(10, 12)])
    config = tmp_path / "sources.toml"
    config.write_text(f'[[analyzer]]\npath = "{store}"\n')
    db = tmp_path / "w.duckdb"
    log = tmp_path / "nightly.log"
    dbt_paths = {"DBT_TARGET_PATH": str(tmp_path / "dbt-target"), "DBT_LOG_PATH": str(tmp_path / "dbt-logs")}
    nightly = ("nightly", "--config", config, "--as-of", "2026-11-01", "--db", db, "--log-file", log)
    result = run_cli(*nightly, env=cli_env(**dbt_paths), timeout=900)
    assert result.returncode == 1, result.stdout + result.stderr
    assert_printable(result.stdout + result.stderr + log.read_text())
    prefix = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (INFO|ERROR|WARNING) ")
    for line in log.read_text().splitlines():
        assert prefix.match(line) or line.startswith("    "), f"a log line without its prefix: {line!r}"
    ingest_lines = [line for line in log.read_text().splitlines() if " ingest  " in line]
    assert len(ingest_lines) == 1 and "ERROR ingest  failed:" in ingest_lines[0], ingest_lines
    assert "INFO nightly ok\\x1b[31m" in ingest_lines[0]
    assert sum(1 for line in result.stdout.splitlines() if "nightly ok" in line and not prefix.match(line)) == 0
    assert not os.path.islink(log)
