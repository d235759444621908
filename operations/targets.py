"""Which engine builds: `build` and `nightly` run dbt on the DuckDB file, or with `--target spark` /
`spark_local` on Spark (operations/spark.py: lake first, marts copied back afterwards). After a successful build
on either engine the marts are published to the serving file the dashboard reads (operations/serving.py): on
DuckDB by dbt's own on-run-end hook (operations/dbt_plugin.py, as for a plain `dbt build`), on Spark here,
once the marts are copied back; a failed build publishes nothing. Either way the build returns a `BuildResult`
saying what was published."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import duckdb

from operations.build import BuildProgress, BuildResult, Sink, dbt_build, resolve_target
from operations.data_test_scope import new_loads_since
from operations.serving import Publication, publish
from operations.spark import spark_build
from warehouse.as_of import ReportInstant
from warehouse.build_record import publish_hint
from warehouse.errors import UserError

# the one line the on-run-end hook logs (operations/dbt_plugin.py's `publish_build`), after dbt's time stamp
HOOK_LINE = re.compile(r"^(?:\S+\s+)?((?:published|nothing published:|not published:) .*?)\s*$")
PUBLISHED = re.compile(
    r"^published (?P<relations>\d+) marts \((?P<rows>[\d,]+) rows\) to (?P<path>.+) in (?P<seconds>[\d.]+) s "
    r"(?:incrementally: (?P<removed>[\d,]+) rows removed, (?P<recomputed>\d+) relations recomputed"
    r"|in full: (?P<reason>.*?))?(?: \(the file .*)?$"
)
NOTHING_PUBLISHED = re.compile(r"^nothing published: .*\((?P<path>.+) unchanged\)$")


def published_line(done: Publication) -> str:
    """What a publish says (the same words as the hook's, operations/dbt_plugin.py)."""
    if not done.relations:
        return f"nothing published: the warehouse has no marts yet ({done.path} unchanged)"
    return f"{done.summary()} (the file the dashboard, report, export and mf read)"


def hook_publication(output: str) -> tuple[Publication | None, str]:
    """What dbt's on-run-end hook published, read from the one line it logs (dbt gives a hook no other way out):
    the Publication (None when nothing was) and the line; (None, "") when the hook said nothing."""
    hooked = [match[1] for line in output.splitlines() if (match := HOOK_LINE.match(line))]
    if not hooked:
        return None, ""
    line = hooked[-1]
    if match := PUBLISHED.match(line):
        rows = int(match["rows"].replace(",", ""))
        mode = "incremental" if match["removed"] is not None else "full"
        removed, recomputed = int((match["removed"] or "0").replace(",", "")), int(match["recomputed"] or 0)
        done = Publication(
            Path(match["path"]), int(match["relations"]), rows, float(match["seconds"]), mode, match["reason"] or ""
        )
        return dataclasses.replace(done, removed=removed, recomputed=recomputed), line
    if match := NOTHING_PUBLISHED.match(line):
        return Publication(Path(match["path"]), 0, 0, 0.0), line
    return None, line


def build_on_target(
    db: Path,
    as_of: ReportInstant | None,
    dbt_args: list[str] | None = None,
    *,
    target: str | None = None,
    sink: Sink | None = None,
    unit_tests: bool = False,
    full_tests: bool = False,
) -> BuildResult:
    """`dbt build` of the warehouse file `db` on the named target (None: DuckDB), its lines to `sink`; the
    result says what was published. The large models' data tests read the new loads unless `full_tests` (or
    --full-refresh, or no earlier build: operations/data_test_scope.py). An unknown target, and whatever a Spark
    target lacks, raise UserError before anything runs."""
    given = next((arg for arg in dbt_args or [] if arg in ("--target", "-t") or arg.startswith("--target=")), None)
    if given is not None:  # dbt's own flag would skip what a Spark build needs and publish under the wrong engine
        raise UserError(
            f"give the target to the command, not to dbt: `build --target NAME` (not `-- {given} ...`)", exit_code=2
        )
    resolved = resolve_target(target)
    if resolved is None or not resolved.is_spark:  # dbt's on-run-end hook publishes (operations/dbt_plugin.py)
        since = new_loads_since(db, dbt_args or [], full_tests=full_tests)
        result = dbt_build(db, as_of, dbt_args, sink=sink, unit_tests=unit_tests, target=target, tests_since=since)
        if not result.ok:
            return result
        published, line = hook_publication(result.output)
        return dataclasses.replace(result, published=published, publish_note=line)
    result = spark_build(db, as_of, resolved, dbt_args, sink=sink, unit_tests=unit_tests)
    if not result.ok:
        return result
    try:
        done = publish(db, engine=resolved.name)
    except (duckdb.Error, OSError, UserError) as exc:  # built, not published: the dashboard keeps the old marts
        line = (
            f"built, but not published (the dashboard shows the last published marts): {str(exc).splitlines()[0]}; "
            f"publish with `{publish_hint(db)}`"
        )
        return _said(dataclasses.replace(result, code=1, publish_note=line), sink)
    return _said(dataclasses.replace(result, published=done, publish_note=published_line(done)), sink)


def _said(result: BuildResult, sink: Sink | None) -> BuildResult:
    """The publish line to the sink, beside dbt's output, and into the result's output."""
    line = result.publish_note + "\n"
    if sink is not None:
        sink(line)
    return dataclasses.replace(result, output=result.output + line)


def print_line(line: str) -> None:
    """The command line's sink off a terminal: each line as it comes."""
    sys.stdout.write(line)
    sys.stdout.flush()


def build_showing_progress(
    db: Path,
    as_of: ReportInstant | None,
    dbt_args: list[str] | None = None,
    *,
    unit_tests: bool = False,
    target: str | None = None,
    full_tests: bool = False,
) -> BuildResult:
    """`dbt build`: on a terminal, a progress line, the summary and what was published; otherwise dbt's own
    output as it comes."""
    if not sys.stdout.isatty():
        return build_on_target(
            db, as_of, dbt_args, unit_tests=unit_tests, target=target, sink=print_line, full_tests=full_tests
        )
    progress = BuildProgress(sys.stdout)
    result = build_on_target(
        db, as_of, dbt_args, unit_tests=unit_tests, sink=progress, target=target, full_tests=full_tests
    )
    progress.finish(result)
    if result.publish_note:
        print(result.publish_note, flush=True)
    return result
