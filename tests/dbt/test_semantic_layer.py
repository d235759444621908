"""The semantic layer (models/marts/semantic/): `mf validate-configs` passes on the demo warehouse, and `mf query`
gives the marts' numbers for the same window and grain (day, week, month; by surface, origin, skill, golden set
and agent config, source).

MetricFlow reads `<project>/target/semantic_manifest.json` and nothing else, so the dbt project is copied into
a temporary folder and parsed there, against a copy of the demo warehouse. `mf` runs on the `serving` target
(FEEDBACK_DBT_TARGET=serving, as docs/metrics.md tells analysts): the warehouse's serving file, read-only; the
marts it is compared with are read from the warehouse file the build published them from.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml

from tests.support.dashboard import DemoWarehouse, copy_warehouse, demo_or_fail
from warehouse.location import serving_path

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PROJECT_PARTS = ("dbt_project.yml", "profiles.yml", "models", "macros", "seeds")
PRECISION = 6  # the marts round every rate to 6 decimals (macros/metrics/rate_columns.sql)


class SemanticLayer:
    def __init__(self, project: Path, db: Path) -> None:
        self.project, self.db = project, db
        self.env = {**os.environ, "FEEDBACK_DB": str(db), "DBT_PROJECT_DIR": str(project)}
        # as docs/metrics.md tells analysts: the serving file's name from the command line, never derived again
        self.env["FEEDBACK_SERVING_DB"] = subprocess.run(
            [str(BIN / "feedback-analytics"), "serving-path", "--db", str(db)],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout.strip()
        self.env.pop("FEEDBACK_DBT_TARGET", None)  # dbt parse: the warehouse's own target
        self.env.pop("DBT_TARGET_PATH", None)

    def mf(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(BIN / "mf"), *args],
            cwd=self.project,
            env={**self.env, "FEEDBACK_DBT_TARGET": "serving"},
            capture_output=True,
            text=True,
            timeout=600,
        )

    def query(self, out: Path, *args: str) -> list[dict[str, str]]:
        done = self.mf("query", *args, "--csv", str(out), "--quiet")
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        with out.open() as rows:
            return list(csv.DictReader(rows))

    def marts(self, sql: str) -> list[tuple]:
        with duckdb.connect(str(self.db), read_only=True) as con:
            return con.execute(sql).fetchall()


@pytest.fixture(scope="module")
def layer(tmp_path_factory: pytest.TempPathFactory) -> SemanticLayer:
    demo: DemoWarehouse = demo_or_fail(tmp_path_factory.getbasetemp())
    folder = tmp_path_factory.mktemp("semantic")
    project = folder / "project"
    project.mkdir()
    for part in PROJECT_PARTS:
        source = ROOT / part
        (shutil.copytree if source.is_dir() else shutil.copyfile)(source, project / part)
    db = copy_warehouse(demo.db, folder / "semantic-layer.duckdb")  # a name DuckDB must quote, as users give
    layer = SemanticLayer(project, db)
    parsed = subprocess.run(
        [str(BIN / "dbt"), "parse", "--quiet", "--project-dir", str(project), "--profiles-dir", str(project)],
        cwd=project,
        env=layer.env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert parsed.returncode == 0, parsed.stdout[-3000:] + parsed.stderr[-3000:]
    assert (project / "target" / "semantic_manifest.json").exists()
    return layer


def rounded(value: str | float | None) -> float | None:
    return None if value in (None, "") else round(float(value), PRECISION)


def day(value: str) -> str:
    return value[:10]


def test_validate_configs_passes_against_the_warehouse(layer: SemanticLayer) -> None:
    done = layer.mf("validate-configs")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    for step in ("the semantics of built manifest", "semantic models against data warehouse", "metrics against data"):
        assert f"Successfully validated {step}" in output, (step, output[-4000:])
    assert "ERRORS: 0" in output and "ERROR:" not in output.replace("ERRORS: 0", "")


def test_serving_path_names_the_serving_file_and_mf_without_it_names_the_variable(
    layer: SemanticLayer, tmp_path: Path
) -> None:
    assert layer.env["FEEDBACK_SERVING_DB"] == str(serving_path(layer.db).resolve())
    env = {key: value for key, value in layer.env.items() if key != "FEEDBACK_SERVING_DB"}
    done = subprocess.run(
        [str(BIN / "mf"), "query", "--metrics", "invocations", "--csv", str(tmp_path / "out.csv"), "--quiet"],
        cwd=layer.project,
        env={**env, "FEEDBACK_DBT_TARGET": "serving"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode != 0
    assert "FEEDBACK_SERVING_DB-is-not-set" in done.stdout + done.stderr
    assert not (tmp_path / "out.csv").exists()


def test_session_rates_per_day_and_surface_are_session_feedback_daily(layer: SemanticLayer, tmp_path: Path) -> None:
    rows = layer.query(
        tmp_path / "q.csv",
        "--metrics", "session_positive_rate,session_skip_rate",
        "--group-by", "metric_time__day,session_answer__surface",
    )  # fmt: skip
    got = {
        (day(r["metric_time__day"]), r["session_answer__surface"]): (
            rounded(r["session_positive_rate"]),
            rounded(r["session_skip_rate"]),
        )
        for r in rows
    }
    marts = layer.marts(
        "select cast(feedback_date as varchar), source, positive_rate, skip_rate from marts.session_feedback_daily"
    )
    expected = {(d, s): (rounded(p), rounded(k)) for d, s, p, k in marts}
    assert len(expected) > 100 and got == expected


def test_session_rates_per_day_and_bucket_are_session_feedback_by_turn_bucket(
    layer: SemanticLayer, tmp_path: Path
) -> None:
    """The other dimension of the same semantic model, against the other mart that counts the answers."""
    rows = layer.query(
        tmp_path / "q.csv",
        "--metrics", "session_positive_rate,answers",
        "--group-by", "metric_time__day,session_answer__turn_count_bucket",
    )  # fmt: skip
    got = {
        (day(r["metric_time__day"]), r["session_answer__turn_count_bucket"]): (
            rounded(r["session_positive_rate"]),
            int(r["answers"]),
        )
        for r in rows
    }
    marts = layer.marts(
        "select cast(feedback_date as varchar), turn_count_bucket, positive_rate, responses "
        "from marts.session_feedback_by_turn_bucket"
    )
    expected = {(d, b): (rounded(p), n) for d, b, p, n in marts}
    assert len(expected) > 300 and got == expected


def test_mf_reads_the_serving_file_while_a_writer_holds_the_warehouse(layer: SemanticLayer, tmp_path: Path) -> None:
    """A process holds the warehouse file for writing (as the nightly job's ingest, purge or build do): `mf query`
    neither waits for it nor fails, and it answers with what was published, not what the writer changed since."""
    rows_before = layer.query(tmp_path / "before.csv", "--metrics", "answers", "--group-by", "metric_time__month")
    with duckdb.connect(str(layer.db)) as writer:
        writer.execute("update marts.session_answers_daily set responses = responses + 1000")  # not published
        held = layer.query(tmp_path / "held.csv", "--metrics", "answers", "--group-by", "metric_time__month")
        writer.execute("update marts.session_answers_daily set responses = responses - 1000")
    by_month = {r["metric_time__month"]: r["answers"] for r in held}
    assert by_month == {r["metric_time__month"]: r["answers"] for r in rows_before} and len(by_month) >= 6


def test_reaction_satisfaction_per_day_and_origin_is_reaction_satisfaction_daily(
    layer: SemanticLayer, tmp_path: Path
) -> None:
    rows = layer.query(
        tmp_path / "q.csv", "--metrics", "reaction_satisfaction", "--group-by", "metric_time__day,reaction__origin"
    )
    got = {(day(r["metric_time__day"]), r["reaction__origin"]): rounded(r["reaction_satisfaction"]) for r in rows}
    marts = layer.marts(
        "select cast(reaction_date as varchar), origin, satisfaction_rate from marts.reaction_satisfaction_daily"
    )
    expected = {(d, o): rounded(rate) for d, o, rate in marts}
    assert len(expected) > 100 and got == expected


def test_correction_rate_per_week_and_skill_is_skill_correction_weekly(layer: SemanticLayer, tmp_path: Path) -> None:
    """Partials weigh 0.5 on both sides; the weekly mart sums the daily history, which equals the stored events
    while nothing was purged (the demo warehouse)."""
    rows = layer.query(
        tmp_path / "q.csv",
        "--metrics", "correction_rate,invocations",
        "--group-by", "metric_time__week,analyzer_event__skill_id",
    )  # fmt: skip
    got = {
        (day(r["metric_time__week"]), r["analyzer_event__skill_id"]): (
            rounded(r["correction_rate"]),
            int(r["invocations"]),
        )
        for r in rows
    }
    marts = layer.marts(
        "select cast(week_start as varchar), skill_id, correction_rate, sample_size from marts.skill_correction_weekly"
    )
    expected = {(w, s): (rounded(rate), n) for w, s, rate, n in marts}
    assert len(expected) > 50 and got == expected


def seed_dimensions() -> list[str]:
    with (ROOT / "seeds" / "analyzer_dimensions.csv").open() as seed:
        return [row["dimension"] for row in csv.DictReader(seed)]


@pytest.mark.parametrize("window", ["recent", "prior"])
def test_dimension_rates_per_skill_are_skill_dimension_changes(
    layer: SemanticLayer, tmp_path: Path, window: str
) -> None:
    """<dimension>_dimension_rate by skill over a trend window of skill_dimension_changes is its rate: the
    dimension's corrections and partials over EVERY invocation of the skill (correction_rate grouped by
    analyzer_event__dimension divides by the dimension's own events instead, which this also shows). The demo's
    as_of is a date, so each window holds the whole days from its start to its end date."""
    metrics = [f"{dimension}_dimension_rate" for dimension in seed_dimensions()]
    (start, end), *others = layer.marts(
        f"select distinct cast({window}_start as varchar), cast({window}_end as varchar) "
        "from marts.skill_dimension_changes"
    )
    assert not others, "one window per build"
    day_filter = f"{{{{ TimeDimension('metric_time', 'day') }}}} >= '{start}' and "
    day_filter += f"{{{{ TimeDimension('metric_time', 'day') }}}} <= '{end}'"
    rows = layer.query(
        tmp_path / "q.csv",
        "--metrics", ",".join(metrics),
        "--group-by", "analyzer_event__skill_id",
        "--where", day_filter,
    )  # fmt: skip
    got = {
        (r["analyzer_event__skill_id"], metric.removesuffix("_dimension_rate")): rounded(r[metric])
        for r in rows
        for metric in metrics
    }
    mart = layer.marts(
        f"select skill_id, dimension, {window}_rate, {window}_invocations, {window}_events "
        "from marts.skill_dimension_changes"
    )
    expected = {(skill, dimension): rounded(rate) for skill, dimension, rate, _, _ in mart if rate is not None}
    # MetricFlow leaves the ratio empty when no row passes the numerator's filter (no such event: a rate of 0)
    got = {key: 0.0 if rate is None else rate for key, rate in got.items()}
    assert len(expected) > 40 and {key: got.get(key) for key in expected} == expected
    # a skill x dimension without a correction or partial in either window has no cell: its rate is 0
    assert all(rate == 0.0 for key, rate in got.items() if key not in expected)
    # the old trap: correction_rate by dimension is over the dimension's own events, far above the share
    trap = layer.query(
        tmp_path / "trap.csv",
        "--metrics", "correction_rate",
        "--group-by", "analyzer_event__skill_id,analyzer_event__dimension",
        "--where", day_filter,
    )  # fmt: skip
    by_dimension = {(r["analyzer_event__skill_id"], r["analyzer_event__dimension"]): r for r in trap}
    assert all(float(by_dimension[key]["correction_rate"]) > rate for key, rate in expected.items() if rate)


def test_dimension_rate_metrics_cover_the_seed_dimensions() -> None:
    """One <dimension>_dimension_rate metric per dimension of seeds/analyzer_dimensions.csv, no more, no fewer."""
    metrics = yaml.safe_load((ROOT / "models" / "marts" / "semantic" / "_semantic__metrics.yml").read_text())
    names = {metric["name"] for metric in metrics["metrics"] if metric["name"].endswith("_dimension_rate")}
    assert names == {f"{dimension}_dimension_rate" for dimension in seed_dimensions()}


def test_eval_pass_rate_and_accuracy_per_day_set_and_config_are_eval_set_accuracy_trend(
    layer: SemanticLayer, tmp_path: Path
) -> None:
    rows = layer.query(
        tmp_path / "q.csv",
        "--metrics", "eval_pass_rate,eval_mean_accuracy,finished_replays",
        "--group-by", "metric_time__day,eval_replay__tenant,eval_replay__golden_set,eval_replay__agent_config",
    )  # fmt: skip
    got = {
        (
            day(r["metric_time__day"]),
            r["eval_replay__tenant"],
            r["eval_replay__golden_set"],
            r["eval_replay__agent_config"],
        ): (rounded(r["eval_pass_rate"]), rounded(r["eval_mean_accuracy"]), int(r["finished_replays"]))
        for r in rows
    }
    marts = layer.marts(
        """
        select cast(trend.run_date as varchar), trend.tenant, trend.golden_set, configs.agent_config_label,
               trend.pass_rate, trend.mean_accuracy, trend.replays
        from marts.eval_set_accuracy_trend as trend
        join intermediate.int_evals__agent_configs as configs using (agent_id)
        """
    )
    expected = {(d, t, g, a): (rounded(p), rounded(m), n) for d, t, g, a, p, m, n in marts}
    assert len(expected) > 20 and got == expected


def test_monthly_session_positive_rate_sums_the_days(layer: SemanticLayer, tmp_path: Path) -> None:
    """A month's rate is its successes over its trials (metric_rates_daily's `all` segment), not a mean of days."""
    rows = layer.query(tmp_path / "q.csv", "--metrics", "session_positive_rate", "--group-by", "metric_time__month")
    got = {day(r["metric_time__month"]): rounded(r["session_positive_rate"]) for r in rows}
    marts = layer.marts(
        """
        select cast(date_trunc('month', metric_date) as date)::varchar, sum(successes) / sum(trials)
        from marts.metric_rates_daily
        where metric = 'session_positive_rate' and segment_type = 'all'
        group by all
        """
    )
    expected = {month: rounded(rate) for month, rate in marts}
    assert len(expected) >= 6 and got == expected


def test_signal_volume_per_day_and_source_is_feedback_signals_daily(layer: SemanticLayer, tmp_path: Path) -> None:
    rows = layer.query(
        tmp_path / "q.csv", "--metrics", "signal_volume", "--group-by", "metric_time__day,signal__source_system"
    )
    got = {(day(r["metric_time__day"]), r["signal__source_system"]): int(r["signal_volume"]) for r in rows}
    marts = layer.marts(
        "select cast(signal_date as varchar), source_system, sum(signals) "
        "from marts.feedback_signals_daily group by all"
    )
    expected = {(d, s): int(n) for d, s, n in marts}
    assert len(expected) > 100 and got == expected


def test_the_weekly_report_saved_queries_run(layer: SemanticLayer, tmp_path: Path) -> None:
    for name, columns in {
        "weekly_headline_rates": {
            "session_positive_rate",
            "reaction_satisfaction",
            "correction_rate",
            "eval_pass_rate",
        },
        "weekly_correction_rate_by_skill": {"analyzer_event__skill_id", "correction_rate"},
        "weekly_eval_pass_rate_by_config": {
            "eval_replay__tenant",
            "eval_replay__golden_set",
            "eval_replay__agent_config",
            "eval_pass_rate",
        },
        "weekly_reaction_satisfaction_by_origin": {"reaction__origin", "reaction_satisfaction"},
    }.items():
        rows = layer.query(tmp_path / f"{name}.csv", "--saved-query", name)
        assert len(rows) >= 10 and columns <= set(rows[0]), (name, rows[:1])
