"""A PostgreSQL DSN's passwords never leave: not in a message, a log line, a manifest row or a mart.

DSNs are read with libpq's rules (key=value with quoted values and backslash escapes, URIs with
percent-encoding, user info and query parameters), against the real test server (trust auth: any password
is accepted). `--postgres env:NAME` reads the DSN from an environment variable.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ingest.databases import redact_dsn
from tests.support.ingest import count, places_containing, run_cli, session_record
from tests.support.operations import AS_OF, ops_env, run_ops
from tests.support.postgres_tables import create_pg_session_feedback
from warehouse.location import serving_path


def assert_one_line_error(result: subprocess.CompletedProcess[str], *names: str) -> str:
    assert result.returncode == 1, f"exit {result.returncode}: {result.stdout!r} {result.stderr!r}"
    assert "Traceback" not in result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ")
    for name in names:
        assert name in line, f"{name!r} not named in {line!r}"
    return line


# -- redaction as libpq parses --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("dsn", "redacted"),
    [
        (
            "host=127.0.0.1 port=5432 dbname=d user=u password='s3cret with space'",
            "host=127.0.0.1 port=5432 dbname=d user=u password=***",
        ),
        ("password = 's3cret with space' host=h", "password = *** host=h"),
        (r"host=h password='it\'s s3cret' user=u", "host=h password=*** user=u"),
        (r"host=h password=s3cret\ tail user=u", "host=h password=*** user=u"),
        ("host=h sslpassword='key s3cret' sslmode=require", "host=h sslpassword=*** sslmode=require"),
        ("postgresql://:s3cret@127.0.0.1:5432/d", "postgresql://@127.0.0.1:5432/d"),
        ("postgres://u:s3cret@h1:5432,h2:5433/d", "postgres://u@h1:5432,h2:5433/d"),
        ("postgresql://u:s3cret%20tail@h/d", "postgresql://u@h/d"),
        ("postgresql://127.0.0.1:5432/d?password=s3cret&sslmode=disable", "postgresql://127.0.0.1:5432/d?password=***&sslmode=disable"),
        ("postgresql://h/d?pass%77ord=s3cret", "postgresql://h/d?pass%77ord=***"),
        ("postgresql://h/d?sslpassword=s3cret%20tail", "postgresql://h/d?sslpassword=***"),
        ("postgresql://u:s3cret?tail@h/d?sslmode=disable", "postgresql://u@h/d?sslmode=disable"),
        ("host=h port=5432 dbname=d", "host=h port=5432 dbname=d"),
    ],
)  # fmt: skip
def test_redaction_finds_every_password(dsn: str, redacted: str) -> None:
    assert redact_dsn(dsn) == redacted
    for part in ("s3cret", "tail", "space"):
        assert part not in redact_dsn(dsn)


def test_a_driver_message_loses_every_form_of_the_secret() -> None:
    """libpq may echo what it read: the secret as written (quoted, percent-encoded) or decoded, or the DSN whole."""
    from warehouse.dsn import redact

    dsn = "postgresql://u:s3cret%20tail@h/d"
    message = f'bad "s3cret tail", "s3cret%20tail" in {dsn}'
    assert redact(message, dsn) == 'bad "***", "***" in postgresql://u@h/d'
    quoted = r"host=h password='s3cret\'s tail'"
    assert redact(f"saw s3cret's tail in {quoted}", quoted) == "saw *** in host=h password=***"


# -- the real server --------------------------------------------------------------------------------------------
def _parts(pg_database: str) -> tuple[str, int, str]:
    url = urlsplit(pg_database)
    assert url.hostname and url.port
    return url.hostname, url.port, url.path.lstrip("/")


def test_unquoted_password_with_a_space_is_refused_unshown(tmp_path: Path, pg_database: str) -> None:
    """libpq's own error quotes the word after the space (`missing "=" after "tailword9"`): refused first."""
    host, port, name = _parts(pg_database)
    dsn = f"host={host} port={port} dbname={name} user=postgres password=s3cret tailword9"
    result = run_cli("ingest", "session-feedback", "--postgres", dsn, "--db", tmp_path / "w.duckdb")
    line = assert_one_line_error(result, "DSN is malformed", "quote a value with spaces")
    assert "s3cret" not in line and "tailword9" not in line, line


def test_postgres_env_reads_the_dsn_from_the_environment(tmp_path: Path, pg_database: str) -> None:
    create_pg_session_feedback(pg_database, [session_record(1), session_record(2)])
    host, port, name = _parts(pg_database)
    dsn = f"host={host} port={port} dbname={name} user=postgres password='env s3cret'"
    db = tmp_path / "w.duckdb"
    env = ops_env(tmp_path, FA_TEST_SF_DSN=dsn)
    result = run_cli("ingest", "session-feedback", "--postgres", "env:FA_TEST_SF_DSN", "--db", db, env=env)
    assert result.returncode == 0, result.stderr
    assert count(db, "session_feedback") == 2
    assert "s3cret" not in result.stdout + result.stderr
    assert places_containing(db, "s3cret") == []

    missing = run_cli("ingest", "workspace", "--postgres", "env:FA_TEST_NOT_SET", "--db", db, env=env)
    assert_one_line_error(missing, "FA_TEST_NOT_SET", "not set")


@pytest.mark.slow
def test_no_password_in_output_log_warehouse_or_serving_file(tmp_path: Path, pg_database: str) -> None:
    """Four DSN forms that load and one that fails (no such database), through `nightly` (ingest, purge, build):
    no secret in its stdout or stderr, its log, dbt's logs, any text of the warehouse or the serving file."""
    create_pg_session_feedback(pg_database, [session_record(n) for n in range(1, 6)])
    host, port, name = _parts(pg_database)
    dsns = {
        "FA_TEST_QUOTED": f"host={host} port={port} dbname={name} user=postgres password='qx7 s3cret'",
        "FA_TEST_NO_USER": f"postgresql://:nx7-s3cret@{host}:{port}/{name}?user=postgres",
        "FA_TEST_QUERY": f"postgresql://postgres@{host}:{port}/{name}?password=px7-s3cret",
        "FA_TEST_SSL": f"host={host} port={port} dbname={name} user=postgres sslpassword='sx7 s3cret'",
        "FA_TEST_WRONG_DB": f"host={host} port={port} dbname=no_such_db user=postgres password='wx7 s3cret'",
    }
    config = tmp_path / "sources.toml"
    config.write_text("".join(f'[[session_feedback]]\npostgres_dsn_env = "{var}"\n' for var in dsns), encoding="utf-8")
    db = tmp_path / "warehouse.duckdb"
    result = run_ops("nightly", "--config", config, "--as-of", AS_OF, "--db", db, env=ops_env(tmp_path, **dsns))
    output = result.stdout + result.stderr
    assert result.returncode == 1, output[-3000:]  # the wrong database fails the ingest step, not the night
    assert "no_such_db" in output and "Traceback" not in output
    assert serving_path(db).exists(), "the build did not publish"
    assert count(db, "session_feedback") == 5

    texts = {"output": output}
    for file in tmp_path.rglob("*"):
        if file.is_file() and not file.name.endswith(".duckdb") and file.name != "sources.toml":
            texts[str(file)] = file.read_text(encoding="utf-8", errors="replace")
    for secret in ("s3cret", "qx7", "nx7", "px7", "sx7", "wx7"):
        assert [where for where, text in texts.items() if secret in text] == [], secret
        assert places_containing(db, secret) == [], secret
        assert places_containing(serving_path(db), secret) == [], secret
