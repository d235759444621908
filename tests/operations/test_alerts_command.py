"""`feedback-analytics alerts` and the nightly's alerts step, by the real command line on the demo warehouse.

The demo (as of 2026-11-01) has one real worsening: skill cpp-expert's correction rate rose from about 14% to
43% from 2026-10-05 on; the default rules fire on it (and not on deslop, which improved). The receivers are real
servers on loopback (tests/support/alert_receivers.py); a test that writes gets its own copy of the warehouse.
What must hold: a dry run prints one line per firing alert and sends and writes nothing; a run sends one JSON
POST per notification naming the rule and the subject, and a second run nothing; a resolved episode and a
reminder are sent once; a failing receiver exits 1, logs nothing as delivered, and the next run delivers; e-mail
is one message per notification; the nightly with a failing receiver exits 1 with its data steps done.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from tests.support.alert_receivers import http_receiver, smtp_receiver
from tests.support.dashboard import AS_OF, copy_warehouse, demo_or_fail
from tests.support.operations import ops_env, run_ops
from warehouse.connection import connect
from warehouse.location import serving_path

TOKEN = "s3cr3t-t0ken"  # in the receiver's URL path (tests/support/alert_receivers.py)
FAST = "timeout_seconds = 1\nretries = 1\nbackoff_seconds = 0.05\nreminder_days = 3\n"
RULE, SKILL = "skill_correction_rate_up", "cpp-expert"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_or_fail(tmp_path_factory.getbasetemp()).db


@pytest.fixture
def db(demo: Path, tmp_path: Path) -> Path:
    return copy_warehouse(demo, tmp_path / "alerts.duckdb")


def config(folder: Path, body: str = 'webhook_url_env = "ALERTS_WEBHOOK_URL"\n') -> Path:
    path = folder / "alerts.toml"
    path.write_text("[alerts]\n" + body + FAST, encoding="utf-8")
    return path


def alerts(db: Path, *args: object, url: str = "", **env: str):  # noqa: ANN201
    return run_ops("alerts", "--db", db, *args, env=ops_env(db.parent, ALERTS_WEBHOOK_URL=url, **env), timeout=120)


def firing_episodes(db: Path) -> list[tuple[str, str]]:
    con = duckdb.connect(str(serving_path(db)), read_only=True)
    try:
        return con.execute("select rule_id, subject from marts.alert_states where is_firing").fetchall()
    finally:
        con.close()


def log(db: Path) -> list[tuple[str, str, str, str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(
            "select rule_id, subject, kind, outcome from raw.alert_notifications order by delivered_at, attempt"
        ).fetchall()
    finally:
        con.close()


def bodies(requests: list) -> list[dict]:
    return [json.loads(request.body) for request in requests]


def test_dry_run_prints_one_line_per_firing_alert_and_sends_nothing(db: Path, tmp_path: Path) -> None:
    firing = firing_episodes(db)
    assert (RULE, SKILL) in firing and (RULE, "deslop") not in firing
    with http_receiver("200") as receiver:
        result = alerts(db, "--config", config(tmp_path), "--dry-run", url=receiver.url)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(firing)
    assert all(line.startswith("firing  ") for line in lines)
    assert any(RULE in line and f"  {SKILL}  " in line and "since 2026-" in line for line in lines), lines
    assert "would send" in result.stderr and "nothing sent" in result.stderr
    assert receiver.requests == []
    assert log(db) == []

    # the channel's variable unset on this machine: the dry run still lists what fires, and says what a real run
    # would stop at (a real run refuses it, exit 2)
    unset = alerts(db, "--config", config(tmp_path), "--dry-run")
    assert unset.returncode == 0, unset.stderr
    assert unset.stdout.splitlines() == lines
    assert "a real run would stop here (exit 2)" in unset.stderr and "ALERTS_WEBHOOK_URL" in unset.stderr
    assert alerts(db, "--config", config(tmp_path)).returncode == 2


def test_notifies_once_reminds_and_resolves(db: Path, tmp_path: Path) -> None:
    firing = firing_episodes(db)
    with http_receiver("200") as receiver:
        first = alerts(db, "--config", config(tmp_path), url=receiver.url)
        assert first.returncode == 0, first.stdout + first.stderr
        sent = bodies(receiver.requests)
        assert len(sent) == len(firing)  # one JSON POST per notification
        assert {(body["rule_id"], body["subject"]) for body in sent} == set(firing)
        assert {body["kind"] for body in sent} == {"firing"}
        assert sum(line.startswith("sent  ") for line in first.stdout.splitlines()) == len(firing)
        assert f"sent {len(firing)}, failed 0" in first.stdout
        assert TOKEN not in first.stdout + first.stderr

        second = alerts(db, "--config", config(tmp_path), url=receiver.url)
        assert second.returncode == 0 and len(receiver.requests) == len(firing)  # nothing changed: nothing sent

        with connect(db) as con:  # the last deliveries four days ago: past reminder_days (3)
            con.execute("update raw.alert_notifications set delivered_at = delivered_at - interval 4 day")
        third = alerts(db, "--config", config(tmp_path), url=receiver.url)
        assert third.returncode == 0, third.stderr
        reminders = bodies(receiver.requests[len(firing) :])
        assert sorted((b["rule_id"], b["subject"], b["kind"]) for b in reminders) == sorted(
            (rule, subject, "reminder") for rule, subject in firing
        )

        # the next build finds cpp-expert's rate back to normal: its episode resolved (written into the
        # published marts as that build would publish them; rebuilding the demo with new data costs minutes)
        serving = duckdb.connect(str(serving_path(db)))
        try:
            serving.execute(
                "update marts.alert_states set is_firing = false, resolved_on = date '2026-11-01' "
                "where rule_id = ? and subject = ?",
                [RULE, SKILL],
            )
        finally:
            serving.close()
        fourth = alerts(db, "--config", config(tmp_path), url=receiver.url)
        assert fourth.returncode == 0, fourth.stderr
        resolved = bodies(receiver.requests[2 * len(firing) :])
        assert [(b["rule_id"], b["subject"], b["kind"]) for b in resolved] == [(RULE, SKILL, "resolved")]
        fifth = alerts(db, "--config", config(tmp_path), url=receiver.url)
        assert fifth.returncode == 0 and len(receiver.requests) == 2 * len(firing) + 1
    kinds = [kind for _, _, kind, outcome in log(db) if outcome == "delivered"]
    assert kinds.count("resolved") == 1 and kinds.count("firing") == len(firing)


def test_a_failing_receiver_exits_1_and_the_next_run_delivers(db: Path, tmp_path: Path) -> None:
    firing = firing_episodes(db)
    with http_receiver("500") as receiver:
        failed = alerts(db, "--config", config(tmp_path), url=receiver.url)
        assert failed.returncode == 1, failed.stdout + failed.stderr
        assert "Traceback" not in failed.stderr and TOKEN not in failed.stdout + failed.stderr
        error = [line for line in failed.stderr.splitlines() if line.startswith("error: ")]
        assert (
            len(error) == 1 and f"sent 0, failed {len(firing)}" in error[0] and "webhook http://127.0.0.1" in error[0]
        )
        assert sum(line.startswith("FAILED  ") for line in failed.stdout.splitlines()) == len(firing)
        assert log(db) and all(outcome != "delivered" for *_, outcome in log(db))
        receiver.script[:] = ["200"]
        fixed = alerts(db, "--config", config(tmp_path), url=receiver.url)
        assert fixed.returncode == 0, fixed.stderr
    delivered = [(rule, subject) for rule, subject, kind, outcome in log(db) if outcome == "delivered"]
    assert sorted(delivered) == sorted(firing)


def test_email_is_one_message_per_notification(db: Path, tmp_path: Path) -> None:
    firing = firing_episodes(db)
    body = 'smtp_url_env = "ALERTS_SMTP_URL"\nemail_from = "alerts@example.com"\nemail_to = ["team@example.com"]\n'
    with smtp_receiver(tmp_path, "alerts", "pa55") as receiver:
        cert = tmp_path / "smtp-cert.pem"
        url = f"smtp://alerts:pa55@localhost:{receiver.port}"
        result = alerts(db, "--config", config(tmp_path, body), ALERTS_SMTP_URL=url, SSL_CERT_FILE=str(cert))
        assert result.returncode == 0, result.stdout + result.stderr
        subjects = [message["Subject"] for _, message in receiver.messages]
    assert len(subjects) == len(firing)
    assert any("FIRING" in subject and SKILL in subject for subject in subjects), subjects
    assert "pa55" not in result.stdout + result.stderr


def test_no_channel_and_no_build_are_one_line_errors(db: Path, tmp_path: Path) -> None:
    nothing = alerts(db)
    assert nothing.returncode == 2 and "no alert channel configured" in nothing.stderr
    assert "Traceback" not in nothing.stderr and log(db) == []
    fresh = tmp_path / "fresh" / "never_built.duckdb"
    fresh.parent.mkdir()
    connect(fresh).close()
    never = alerts(fresh, "--dry-run")
    assert never.returncode == 1 and "feedback-analytics build" in never.stderr
    assert len(never.stderr.strip().splitlines()) == 1


def test_the_nightly_with_a_failing_receiver_exits_1_with_its_data_steps_done(demo: Path, tmp_path: Path) -> None:
    db = copy_warehouse(demo, tmp_path / "nightly.duckdb")
    data = demo.parent / "demo-data"  # the demo's sources (paths made absolute) and the [alerts] table
    sources = (data / "sources.toml").read_text(encoding="utf-8").replace('path = "', f'path = "{data}/')
    nightly_config = tmp_path / "nightly.toml"
    nightly_config.write_text(sources + "\n" + config(tmp_path).read_text(encoding="utf-8"), encoding="utf-8")
    with http_receiver("500") as receiver:
        result = run_ops(
            "nightly",
            "--config",
            nightly_config,
            "--db",
            db,
            "--as-of",
            AS_OF,
            env=ops_env(tmp_path, ALERTS_WEBHOOK_URL=receiver.url),
            timeout=600,
        )
    assert result.returncode == 1, result.stdout + result.stderr
    levels = {line.split()[2]: line.split()[1] for line in result.stdout.splitlines() if len(line.split()) > 3}
    assert levels["alerts"] == "ERROR" and levels["build"] == levels["purge"] == "INFO", result.stdout
    assert "nightly failed: alerts" in result.stdout
    assert receiver.requests  # it tried
    assert log(db) and all(outcome != "delivered" for *_, outcome in log(db))
