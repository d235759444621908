"""No single input stops the night: a line too long or nested too deep is quarantined unparsed (reason, length,
SHA-256, text cut to 1 KiB) in flat memory; a source of a config that fails stops no other source.

Real files and the real command line (`python -m cli`); the peak memory is the child's own (wait4's rusage).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from tests.support.ingest import analyzer_event, cli_env, count, quarantine, query, run_cli, write_jsonl

PEAK_LIMIT_BYTES = 1.5 * 1024**3
# the documented defaults (docs/operations.md, ingest/line_limits.py) and the text kept of such a line
DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_DEPTH, TEXT_CAP = 16 * 1024 * 1024, 64, 1024


def _run_measured(tmp_path: Path, *args: object) -> tuple[subprocess.CompletedProcess[str], int]:
    """`python -m cli ARGS...` and the peak resident memory of that process (bytes): wait4's own rusage."""
    out_path, err_path = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with out_path.open("w") as out, err_path.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cli", *(str(a) for a in args)],
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=cli_env(),
        )
        _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    result = subprocess.CompletedProcess(proc.args, code, out_path.read_text(), err_path.read_text())
    return result, usage.ru_maxrss * 1024  # KiB on Linux


def _event(n: int) -> bytes:
    return json.dumps(analyzer_event(n)).encode()


def test_a_300_mb_line_and_a_20_million_deep_line_are_quarantined_in_flat_memory(tmp_path: Path) -> None:
    deep_line = b"[" * 20_000_000
    write_jsonl(tmp_path / "deep.jsonl", [_event(1), deep_line, _event(2)])
    # a 300 MB last line without a newline: a JSON object whose snippet never ends
    huge = tmp_path / "huge.jsonl"
    head = b'{"event_id": "e-huge", "skill_id": "s", "outcome": "acceptance", "user_message_snippet": "'
    block = b"<script>alert(1)</script>=cmd|' /C calc'!A0 " * 20_000  # about 0.9 MB of hostile text
    digest = hashlib.sha256(head)
    with huge.open("wb") as handle:
        handle.write(_event(3) + b"\n" + head)
        written = len(head)
        while written < 300 * 1024 * 1024:
            handle.write(block)
            digest.update(block)
            written += len(block)
    config = tmp_path / "sources.toml"
    config.write_text('[[analyzer]]\npath = "deep.jsonl"\n\n[[analyzer]]\npath = "huge.jsonl"\n')
    db = tmp_path / "w.duckdb"

    result, peak = _run_measured(tmp_path, "ingest", "--config", config, "--db", db)

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert peak < PEAK_LIMIT_BYTES, f"peak memory {peak / 1024**2:.0f} MiB"
    assert count(db, "analyzer_events") == 3  # every other line of both files
    lines = {
        (Path(uri).name, line): (key, text, reason)
        for uri, line, key, text, reason in query(
            db, "select source_uri, line_number, record_key, raw_text, reason from raw.quarantine"
        )
    }
    assert set(lines) == {("deep.jsonl", 2), ("huge.jsonl", 2)}
    key, text, reason = lines["deep.jsonl", 2]
    assert key == "sha256:" + hashlib.sha256(deep_line).hexdigest()
    assert text == "[" * TEXT_CAP
    assert reason.startswith(f"line over {DEFAULT_MAX_LINE_BYTES:,} bytes") and "20,000,000 bytes" in reason
    key, text, reason = lines["huge.jsonl", 2]
    assert key == "sha256:" + digest.hexdigest()
    assert text == (head + block)[:TEXT_CAP].decode()
    assert f"{written:,} bytes" in reason
    # the next run finds both files unchanged: the night after is not stopped either
    again = run_cli("ingest", "--config", config, "--db", db)
    assert again.returncode == 0 and "unchanged" in again.stdout, again.stderr


def test_nesting_is_measured_outside_strings_and_the_limits_are_configurable(tmp_path: Path) -> None:
    def nested(n: int, depth: int) -> bytes:
        event = analyzer_event(n)
        text = json.dumps(event)[:-1] + ', "extra": ' + "[" * depth + "]" * depth + "}"
        return text.encode()

    brackets_in_text = json.dumps(analyzer_event(3, user_message_snippet="[{" * 500)).encode()
    long_line = json.dumps(analyzer_event(4, user_message_snippet="x" * 3000)).encode()
    deep_inside = nested(5, DEFAULT_MAX_DEPTH)  # the record's brace and 64 brackets: 65 levels
    files = {
        "default.jsonl": [nested(1, DEFAULT_MAX_DEPTH - 1), deep_inside, brackets_in_text, long_line],
        "tight.jsonl": [nested(6, 2), nested(7, 3), _event(8), long_line.replace(b'"e', b'"f', 1)],
    }
    for name, items in files.items():
        write_jsonl(tmp_path / name, items, newline=b"\r\n")
    db = tmp_path / "w.duckdb"
    default = tmp_path / "default.toml"
    default.write_text('[[analyzer]]\npath = "default.jsonl"\n')
    tight = tmp_path / "tight.toml"
    tight.write_text('[limits]\nmax_line_bytes = 2048\nmax_depth = 3\n\n[[analyzer]]\npath = "tight.jsonl"\n')

    for config in (default, tight):
        result = run_cli("ingest", "--config", config, "--db", db)
        assert result.returncode == 0, result.stderr

    found = {(Path(row["source_uri"]).name, row["line_number"]): row for row in quarantine(db)}
    assert sorted(found) == [("default.jsonl", 2), ("tight.jsonl", 2), ("tight.jsonl", 4)]
    assert found["default.jsonl", 2]["reason"].startswith(f"nested deeper than {DEFAULT_MAX_DEPTH} levels")
    assert found["default.jsonl", 2]["record_key"] == "sha256:" + hashlib.sha256(deep_inside).hexdigest()
    assert found["default.jsonl", 2]["raw_text"] == deep_inside[:TEXT_CAP].decode()
    assert found["tight.jsonl", 2]["reason"].startswith("nested deeper than 3 levels")
    assert found["tight.jsonl", 4]["reason"].startswith("line over 2,048 bytes")
    assert count(db, "analyzer_events") == 3 + 2


def test_a_bad_limit_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "sources.toml"
    config.write_text('[limits]\nmax_depth = "deep"\n\n[[analyzer]]\npath = "x.jsonl"\n')
    result = run_cli("ingest", "--config", config, "--db", tmp_path / "w.duckdb")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: config file {config}, [limits]: max_depth must be a whole number of at least 1, not 'deep'"
    ]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_source_that_fails_stops_no_other_source(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "first.jsonl", [analyzer_event(1)])
    write_jsonl(tmp_path / "last.jsonl", [analyzer_event(2)])
    (tmp_path / "not-a-database.sqlite3").write_bytes(b"SQLite format 3\x00" + os.urandom(4000))
    (tmp_path / "reactions.jsonl").mkdir()  # a folder of no blobs where a file is expected
    config = tmp_path / "sources.toml"
    config.write_text(
        '[[analyzer]]\npath = "first.jsonl"\n\n'
        '[[session_feedback]]\npath = "not-a-database.sqlite3"\n\n'
        '[[workspace]]\npostgres_dsn_env = "NIGHT_TEST_REFUSING_PG"\n\n'
        '[[reactions]]\npostgres_dsn_env = "NIGHT_TEST_UNSET_VARIABLE"\n\n'
        '[[reactions]]\npath = "reactions.jsonl"\n\n'
        '[[analyzer]]\npath = "last.jsonl"\n'
    )
    env = cli_env(NIGHT_TEST_REFUSING_PG=f"postgresql://night:s3cret@127.0.0.1:{_closed_port()}/feedback")
    env.pop("NIGHT_TEST_UNSET_VARIABLE", None)
    db = tmp_path / "w.duckdb"

    result = run_cli("ingest", "--config", config, "--db", db, env=env)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: 4 source(s) failed: "), line
    for name in ("not-a-database.sqlite3", "$NIGHT_TEST_REFUSING_PG", "NIGHT_TEST_UNSET_VARIABLE", "reactions.jsonl"):
        assert name in line, f"{name} not named in {line}"
    assert "s3cret" not in result.stdout + result.stderr
    assert count(db, "analyzer_events") == 2  # the sources before and after the failures
    assert "total: read 2, landed 2" in result.stdout
