"""Progress of long loads: files, rows and rate on a terminal; silent under --quiet or in a pipe."""

from __future__ import annotations

import sys
import time
from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from warehouse.printable import printable


class LoadProgress:
    """Shows one bar per file (bytes read) and a running row count with a rate."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._rows = 0
        self._files = 0
        self._started = time.perf_counter()

    def __enter__(self) -> LoadProgress:
        if self.enabled:
            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TextColumn("{task.fields[rows]:>12,} rows  {task.fields[rate]:>9,.0f} rows/s"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._progress.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)

    def start(self, name: str, total_bytes: int | None) -> None:
        self._files += 1
        if self._progress is None:
            return
        if self._task is not None:
            self._progress.remove_task(self._task)
        label = escape(printable(name))  # a file name is neither a control sequence nor rich markup
        self._task = self._progress.add_task(f"[{self._files}] {label}", total=total_bytes, rows=self._rows, rate=0.0)

    def bytes_read(self, count: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, count)

    def rows_done(self, count: int) -> None:
        self._rows += count
        if self._progress is not None and self._task is not None:
            rate = self._rows / max(time.perf_counter() - self._started, 1e-9)
            self._progress.update(self._task, rows=self._rows, rate=rate)
