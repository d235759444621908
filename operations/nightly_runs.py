"""The nightly's own record in the warehouse: raw.nightly_runs, one row per run that took the lock.

The row is written `running` when the run starts, its `failed_steps` updated
after each step (so that the same night's build already sees an ingest that
failed: the nightly_failed alert rule, docs/alerts.md), and finished `ok` or
`failed` with `finished_at` at the end. Each write is one short transaction on
its own connection (warehouse/connection.py, which creates the table when
missing), so no step finds the warehouse held. A run killed mid-way stays
`running`; the rule calls it failed once it is older than a day. A run
skipped because another held the lock writes nothing.

Recording is bookkeeping: a write that fails (the warehouse cannot be opened,
which the steps then report themselves) is logged and never fails the run.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

import duckdb

from warehouse.as_of import ReportInstant
from warehouse.connection import connect
from warehouse.errors import UserError


class StepOutcome(Protocol):
    name: str
    ok: bool


StepT = TypeVar("StepT", bound=StepOutcome)


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


class NightlyRunRecord:
    """The row of one nightly run in raw.nightly_runs."""

    def __init__(self, db: Path, as_of: ReportInstant, logger: logging.Logger) -> None:
        self.db = db
        self.run_id = str(uuid.uuid4())
        self.logger = logger
        self.as_of = as_of.instant  # naive UTC, like every timestamp of the raw tables
        self.failed: list[str] = []

    def _write(self, sql: str, parameters: list[object]) -> None:
        try:
            con = connect(self.db)
            try:
                con.execute("begin transaction")
                con.execute(sql, parameters)
                con.execute("commit")
            finally:
                con.close()
        except (UserError, duckdb.Error) as exc:
            self.logger.warning("could not record the run in raw.nightly_runs: %s", str(exc).splitlines()[0])

    def start(self) -> None:
        self._write(
            "insert into raw.nightly_runs (run_id, started_at, finished_at, as_of, status, failed_steps) "
            "values (?, ?, null, ?, 'running', '')",
            [self.run_id, _utc_now(), self.as_of],
        )

    def step(self, result: StepT) -> StepT:
        """After a step: a failed one is added to the row's failed steps at once (in run order)."""
        if not result.ok:
            self.failed.append(result.name)
            self._write(
                "update raw.nightly_runs set failed_steps = ? where run_id = ?", [",".join(self.failed), self.run_id]
            )
        return result

    def finish(self, failed: Sequence[str]) -> None:
        self._write(
            "update raw.nightly_runs set failed_steps = ?, status = ?, finished_at = ? where run_id = ?",
            [",".join(failed), "failed" if failed else "ok", _utc_now(), self.run_id],
        )
