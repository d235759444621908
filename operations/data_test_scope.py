"""Which rows a build's data tests read: the new loads, or every row (macros/test_scope/new_loads_only.sql).

The data tests of the large models (docs/operations.md, "What each nightly checks") read the rows that came
with the loads since the last successful build (warehouse/build_record.py: its `finished_at`); every row
when the build is told to (`--full-tests`), on `--full-refresh`, and when no build was recorded yet. The
instant reaches dbt as FEEDBACK_TESTS_SINCE, read when the tests' SQL runs (a changed var would make dbt parse
the whole project again, like the as-of)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

from warehouse.build_record import last_build

ENV_VAR = "FEEDBACK_TESTS_SINCE"


def new_loads_since(db: Path, dbt_args: Sequence[str] = (), *, full_tests: bool = False) -> dt.datetime | None:
    """The instant after which loads are new to the data tests (UTC, naive); None for full tests."""
    if full_tests or "--full-refresh" in dbt_args:
        return None
    record = last_build(db)
    return record.finished_at if record is not None else None


def since_text(since: dt.datetime | None) -> str:
    """The instant as FEEDBACK_TESTS_SINCE receives it: UTC text to the microsecond, "" for full tests."""
    return "" if since is None else since.isoformat(sep=" ", timespec="microseconds")
