"""Which engine builds: `build` and `nightly` run dbt on the DuckDB file, or with `--target spark` /
`spark_local` on Spark (operations/spark.py: lake first, marts copied back afterwards). After a successful build
on either engine the marts are published to the serving file the dashboard reads (operations/serving.py): on
DuckDB by dbt's own on-run-end hook (operations/dbt_plugin.py, as for a plain `dbt build`), on Spark here,
once the marts are copied back; a failed build publishes nothing."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb

from operations.build import BuildProgress, dbt_build, resolve_target
from operations.serving import publish
from operations.spark import spark_build
from warehouse.build_record import publish_hint
from warehouse.errors import UserError

# what the on-run-end hook logs (macros/publish/publish_serving_file.sql), after dbt's time stamp
HOOK_LINE = re.compile(r"^(?:\S+\s+)?((?:published|nothing published|not published:) .*?)\s*$")


def build_on_target(
    db: Path,
    as_of: str | None,
    dbt_args: list[str] | None = None,
    *,
    target: str | None = None,
    capture: bool = False,
    unit_tests: bool = False,
    on_line: Callable[[str], None] | None = None,
) -> tuple[int, str]:
    """`dbt build` of `db` on the named target (None: DuckDB); exit code and (when captured) the output.
    An unknown target, and whatever a Spark target lacks, raise UserError before anything runs."""
    given = next((arg for arg in dbt_args or [] if arg in ("--target", "-t") or arg.startswith("--target=")), None)
    if given is not None:  # dbt's own flag would skip what a Spark build needs and publish under the wrong engine
        raise UserError(
            f"give the target to the command, not to dbt: `build --target NAME` (not `-- {given} ...`)", exit_code=2
        )
    resolved = resolve_target(target)
    if resolved is not None and resolved.is_spark:
        code, output = spark_build(
            db, as_of, resolved, dbt_args, capture=capture, unit_tests=unit_tests, on_line=on_line
        )
    else:
        code, output = dbt_build(
            db, as_of, dbt_args, capture=capture, unit_tests=unit_tests, on_line=on_line, target=target
        )
    if code != 0:
        return code, output
    if resolved is None or not resolved.is_spark:  # dbt's on-run-end hook published (operations/dbt_plugin.py)
        hooked = [match[1] for line in output.splitlines() if (match := HOOK_LINE.match(line))]
        if hooked and (capture or on_line is not None):
            _say(hooked[-1] + "\n", capture=capture, on_line=on_line)
            return code, output + hooked[-1] + "\n"
        return code, output
    try:
        done = publish(db, engine=resolved.name)
    except (duckdb.Error, OSError, UserError) as exc:  # built, not published: the dashboard keeps the old marts
        line = (
            f"built, but not published (the dashboard shows the last published marts): {str(exc).splitlines()[0]}; "
            f"publish with `{publish_hint(db)}`\n"
        )
        _say(line, capture=capture, on_line=on_line)
        return 1, output + line if capture or on_line is not None else output
    line = (
        f"published {done.relations} marts ({done.rows:,} rows) to {done.path} in {done.seconds:.1f} s "
        "(the file the dashboard, report, export and mf read)\n"
        if done.relations
        else f"nothing published: the warehouse has no marts yet ({done.path} unchanged)\n"
    )
    _say(line, capture=capture, on_line=on_line)
    return code, output + line if capture or on_line is not None else output


def _say(line: str, *, capture: bool, on_line: Callable[[str], None] | None) -> None:
    if on_line is not None:
        on_line(line)
    elif not capture:
        sys.stdout.write(line)
        sys.stdout.flush()


def build_showing_progress(
    db: Path,
    as_of: str | None,
    dbt_args: list[str] | None = None,
    *,
    unit_tests: bool = False,
    target: str | None = None,
) -> int:
    """`dbt build`: on a terminal, a progress line and the summary; otherwise dbt's own output."""
    if not sys.stdout.isatty():
        return build_on_target(db, as_of, dbt_args, unit_tests=unit_tests, target=target)[0]
    progress = BuildProgress(sys.stdout)
    code, output = build_on_target(db, as_of, dbt_args, unit_tests=unit_tests, on_line=progress, target=target)
    progress.finish(code, output)
    published = [
        line for line in output.splitlines() if line.startswith(("published ", "nothing published", "built, but not"))
    ]
    if published:
        print(published[-1], flush=True)
    return code
