"""Every dashboard page in chromium on a quiet machine, then while full builds of the same warehouse run and publish.

    .venv/bin/python -m bench.dashboard_during_build --db <built warehouse> [--loads 20]

The goal (issue: the dashboard during a full build at scale 100): every page
loads, zero failures in N loads per page, with p95 within 1.5x of a quiet
machine's.

1. Starts `python -m cli dashboard` on the warehouse and opens it in Debian's
   chromium (bench/dashboard_render.py: the same launch, the same "fully
   rendered" condition).
2. Quiet: N rounds through the pages, each page reached the "navigate" way: a
   click on it in the sidebar of the open dashboard, just after the serving
   file's modification time was bumped so every query of the page runs (the
   query cache is keyed by the serving file's identity; a publish renames a
   new file in, so after every publish the cache misses anyway).
   Why navigate and not reload: a product lead keeps the dashboard open and
   clicks from page to page; a reload opens a new Streamlit session each
   time, while a click keeps the one session (and its websocket) that was
   open when the build began, which is what a publish must not break. The
   front end is already loaded, so the time is the page's own: the script
   run, its queries on the serving file, drawing the charts.
3. Under load: `python -m cli build --db WAREHOUSE --as-of <its last build's
   as-of> -- --full-refresh` in a subprocess (dbt's target/ and logs/ in a
   temporary folder), started again as soon as it exits, until the same
   rounds are done; a load starts only while a build process runs. The
   warehouse's own as-of (operations.build.last_build_as_of) rebuilds the
   same numbers; `--full-refresh` keeps every build a full one now that some
   intermediate models are incremental (the history marts are
   `full_refresh: false`, so it keeps them). Every build publishes: it
   renames a new serving file over the one the dashboard reads. A thread
   watches the serving file's inode; rounds go on past N until at least one
   publish fell within the loads (the table says how many loads). At the end
   the running build is let finish, so the warehouse is left built and
   published as before.

A load is a failure when Playwright raises (a timeout of 60 s included), or
the page shows a Streamlit exception, a dialog, an error box, a warning of
dashboards/data.py's WarehouseUnavailable ("... is unavailable", "Cannot open
the warehouse", "held for writing", "lacks a table/column": a degraded page or
section), or no "Data as of" line (the page stopped before its header). A failure is counted
and never retried; the page is reopened by its URL (untimed) only when
Playwright raised, and the next load goes on from there. Failed loads are
left out of p50/p95. Screenshots of failures go to bench/out/.

Prints a Markdown table per page (quiet p50/p95, during-build p50/p95, ratio
of the p95s, failures, goal met: ratio <= 1.5 and no failure) and writes
every load, build and publish to bench/out/dashboard_during_build.json.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.dashboard_queries import p95
from bench.dashboard_render import (
    TIMEOUT_MS,
    checked_arguments,
    chromium,
    invalidate_queries,
    navigate,
    open_dashboard,
    reload,
)
from bench.dashboard_render import p50_p95 as cell
from operations.build import last_build_as_of
from tests.support.dashboard import PAGES, DashboardPage
from warehouse.location import serving_path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
RESULT = OUT / "dashboard_during_build.json"
SHOTS = OUT / "dashboard_during_build-failures"
GOAL_RATIO = 1.5
QUIET, DURING = "quiet", "during build"
BUILD_WAIT_S = 120  # for a build process to be running before a load (a restart takes milliseconds)
GIVE_UP_AFTER_FAILED_BUILDS = 3
MAX_EXTRA_ROUNDS = 200  # past N, waiting for a first publish within the loads
MAX_SHOTS = 20
PROBLEMS = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const texts = sel => [...document.querySelectorAll(sel)].map(e => e.innerText.trim().slice(0, 500));
    const found = [
        ...texts('[data-testid="stException"]').map(t => 'exception: ' + t),
        ...texts('[role="dialog"]').map(t => 'dialog: ' + t),
        ...texts('[data-testid="stAlertContentError"]').map(t => 'error: ' + t),
        ...texts('[data-testid="stAlertContentWarning"]')
            .filter(t => /unavailable|cannot open|held for writing|lacks a/i.test(t)).map(t => 'warning: ' + t),
    ];
    if (!main || !main.innerText.includes('Data as of')) found.push('no "Data as of" line in the page');
    return found;
}"""


@dataclass
class Load:
    phase: str
    page: str
    round: int
    started: float  # perf_counter
    ended: float
    seconds: float | None  # until fully rendered; None when Playwright raised
    problems: list[str]
    build_running: tuple[bool, bool] = (False, False)  # a build process ran at its start, at its end
    publishes_during: int = 0
    screenshot: str | None = None

    @property
    def failed(self) -> bool:
        return bool(self.problems)


@dataclass
class Build:
    number: int
    started: float
    ended: float | None = None
    exit_code: int | None = None
    published: str = ""  # the command's "published N marts ..." line
    log: str = ""


@dataclass
class Builds:
    """`python -m cli build` again and again in a thread, until `stop` is set (the running one finishes)."""

    db: Path
    as_of: str
    work: Path
    runs: list[Build] = field(default_factory=list)
    running: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)
    gave_up: str = ""
    process: subprocess.Popen | None = None
    thread: threading.Thread | None = None

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "cli",
            "build",
            "--db",
            str(self.db),
            "--as-of",
            self.as_of,
            "--",
            "--full-refresh",
        ]

    def start(self) -> None:
        self.thread = threading.Thread(target=self._loop, name="builds", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        env = {
            **os.environ,
            "DBT_TARGET_PATH": str(self.work / "dbt-target"),
            "DBT_LOG_PATH": str(self.work / "dbt-logs"),
        }
        failed_in_a_row = 0
        while not self.stop.is_set():
            run = Build(len(self.runs) + 1, time.perf_counter(), log=str(self.work / f"build-{len(self.runs) + 1}.log"))
            with open(run.log, "w") as log:
                self.process = subprocess.Popen(
                    self.command(),
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            self.runs.append(run)
            self.running.set()
            run.exit_code = self.process.wait()
            self.running.clear()
            run.ended = time.perf_counter()
            output = Path(run.log).read_text(errors="replace")
            run.published = next((line for line in output.splitlines() if line.startswith("published ")), "")
            print(
                f"  build {run.number}: exit {run.exit_code} after {run.ended - run.started:.0f} s; "
                f"{run.published or 'published nothing'}",
                flush=True,
            )
            failed_in_a_row = failed_in_a_row + 1 if run.exit_code else 0
            if failed_in_a_row >= GIVE_UP_AFTER_FAILED_BUILDS:
                self.gave_up = f"{failed_in_a_row} builds in a row failed; the last one's output:\n{output[-3000:]}"
                self.stop.set()

    def wait_running(self) -> bool:
        """Before a load: True once a build process runs; stops the benchmark when the builds gave up."""
        deadline = time.monotonic() + BUILD_WAIT_S
        while not self.running.wait(0.1):
            if self.gave_up or time.monotonic() > deadline:
                raise SystemExit(f"error: no build running: {self.gave_up or f'none within {BUILD_WAIT_S} s'}")
        return True

    def finish(self, kill: bool = False) -> None:
        """Start no more builds; wait for the running one (or end its process group, ours, when `kill`)."""
        self.stop.set()
        if kill and self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        if self.thread is not None:
            self.thread.join()


@dataclass
class PublishWatch:
    """The serving file's inode, polled every 10 ms in a thread: (perf_counter, inode) at each change."""

    path: Path
    changes: list[tuple[float, int]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def inode(self) -> int:
        try:
            return self.path.stat().st_ino
        except FileNotFoundError:  # never between publishes (a rename replaces the file), but be safe
            return 0

    def start(self) -> None:
        threading.Thread(target=self._loop, name="publish-watch", daemon=True).start()

    def _loop(self) -> None:
        last = self.inode()
        while not self.stop.wait(0.01):
            if (now := self.inode()) != last:
                self.changes.append((time.perf_counter(), now))
                last = now

    def between(self, start: float, end: float) -> int:
        return sum(start <= moment <= end for moment, _ in self.changes)


def load_once(page, db: Path, server_url: str, target: DashboardPage, phase: str, number: int, shots: list) -> Load:
    """One timed click on `target` in the sidebar, the query cache missed; a failure is recorded, not retried."""
    from playwright.sync_api import Error as PlaywrightError

    invalidate_queries(db)
    started = time.perf_counter()
    seconds, raised = None, False
    try:
        seconds = navigate(page, target.title)
        problems = list(page.evaluate(PROBLEMS))
    except PlaywrightError as exc:
        raised = True
        problems = [f"{type(exc).__name__}: {str(exc).splitlines()[0]}"]
    load = Load(phase, target.title, number, started, time.perf_counter(), seconds, problems)
    if problems:
        print(f"  FAILED {phase} {target.title} (round {number}): {'; '.join(problems)[:800]}", flush=True)
        if len(shots) < MAX_SHOTS:
            SHOTS.mkdir(parents=True, exist_ok=True)
            path = SHOTS / f"{len(shots) + 1:02d}-{phase.replace(' ', '-')}-{target.url_path}.png"
            try:
                page.screenshot(path=str(path), full_page=True)
                load.screenshot = str(path)
                shots.append(path)
            except PlaywrightError:
                pass
    if raised:  # reopen the page by its URL (untimed) so the next click starts from a drawn page
        try:
            page.goto(f"{server_url}/{target.address}", timeout=TIMEOUT_MS)
            page.get_by_role("heading", name=target.title, level=1).wait_for(timeout=TIMEOUT_MS)
        except PlaywrightError as exc:
            print(f"  reopening {target.title} failed too: {str(exc).splitlines()[0]}", flush=True)
    return load


def rounds(
    page, db: Path, server_url: str, phase: str, count: int, shots: list, builds: Builds | None, first: int = 1
) -> list[Load]:
    """`count` rounds of clicks through every page in the sidebar's order (each click leaves another page);
    with `builds`, each load starts while a build process runs."""
    loads = []
    for number in range(first, first + count):
        for target in PAGES:
            running_at_start = builds.wait_running() if builds else False
            load = load_once(page, db, server_url, target, phase, number, shots)
            load.build_running = (running_at_start, bool(builds) and builds.running.is_set())
            loads.append(load)
        done = loads[-len(PAGES) :]
        slowest = max((load.seconds or 0.0) for load in done)
        failures = sum(load.failed for load in done)
        print(f"{phase}: round {number}, slowest load {slowest:.2f} s, failures {failures}", flush=True)
    return loads


def under_load(page, db: Path, server_url: str, loads: int, shots: list, builds: Builds, watch: PublishWatch):
    """N rounds while builds run, then one more at a time until at least one publish fell within the loads."""
    done = rounds(page, db, server_url, DURING, loads, shots, builds)
    for extra in range(1, MAX_EXTRA_ROUNDS + 1):
        if watch.between(done[0].started, done[-1].ended):
            break
        print("no publish within the loads yet: one more round", flush=True)
        done += rounds(page, db, server_url, DURING, 1, shots, builds, first=loads + extra)
    return done


def summary(quiet: list[Load], during: list[Load]) -> list[dict]:
    rows = []
    for target in PAGES:
        mine = {
            phase: [x for x in loads if x.page == target.title] for phase, loads in ((QUIET, quiet), (DURING, during))
        }
        times = {phase: [x.seconds for x in loads if not x.failed] for phase, loads in mine.items()}
        ratio = p95(times[DURING]) / p95(times[QUIET]) if times[QUIET] and times[DURING] else None
        failures = {phase: sum(x.failed for x in loads) for phase, loads in mine.items()}
        rows.append(
            {
                "page": target.title,
                "loads": {phase: len(loads) for phase, loads in mine.items()},
                "p50_s": {phase: statistics.median(t) if t else None for phase, t in times.items()},
                "p95_s": {phase: p95(t) if t else None for phase, t in times.items()},
                "p95_ratio": ratio,
                "failures": failures,
                "goal_met": ratio is not None and ratio <= GOAL_RATIO and failures[DURING] == 0,
                "cells": {phase: cell(t) for phase, t in times.items()},
            }
        )
    return rows


def report(rows: list[dict], during: list[Load], builds: Builds, watch: PublishWatch, db: Path) -> dict:
    """Print the table and what the under-load phase saw; returns the facts for the JSON."""
    window = (during[0].started, during[-1].ended)
    facts = {
        "publishes_within_loads": watch.between(*window),
        "loads_in_flight_at_a_publish": sum(x.publishes_during > 0 for x in during),
        "failed_loads_in_flight_at_a_publish": sum(x.publishes_during > 0 and x.failed for x in during),
        "loads_with_a_build_running_throughout": sum(all(x.build_running) for x in during),
        "loads_during_build": len(during),
        "builds": len(builds.runs),
        "failed_builds": sum(bool(run.exit_code) for run in builds.runs),
    }
    n = {x.page: 0 for x in during}
    for load in during:
        n[load.page] += 1
    print()
    print(f"warehouse {db}, chromium headless, each page reached by a click in the sidebar (navigate), query cache")
    print(
        f"missed; loads per page: {rows[0]['loads'][QUIET]} quiet, {rows[0]['loads'][DURING]} during build; p50 / p95"
    )
    print(f"of the loads that did not fail; goal: p95 ratio <= {GOAL_RATIO} and no failure during build")
    print()
    print("| page | quiet p50 / p95 | during build p50 / p95 | p95 ratio | failures during build | goal met |")
    print("|---|---:|---:|---:|---:|---|")
    for row in rows:
        ratio = f"{row['p95_ratio']:.2f}" if row["p95_ratio"] is not None else "n/a"
        failures = f"{row['failures'][DURING]} of {row['loads'][DURING]}"
        met = "yes" if row["goal_met"] else "**no**"
        print(f"| {row['page']} | {row['cells'][QUIET]} | {row['cells'][DURING]} | {ratio} | {failures} | {met} |")
    print()
    quiet_failures = sum(row["failures"][QUIET] for row in rows)
    if quiet_failures:
        print(f"**{quiet_failures} quiet loads failed too** (see the JSON).")
    durations = [run.ended - run.started for run in builds.runs if run.ended is not None]
    print(
        f"- publishes within the loads (serving file's inode changed): {facts['publishes_within_loads']}; "
        f"loads in flight at a publish: {facts['loads_in_flight_at_a_publish']} "
        f"(failed: {facts['failed_loads_in_flight_at_a_publish']})"
    )
    print(
        f"- loads with a build process running at start and end: {facts['loads_with_a_build_running_throughout']} of "
        f"{len(during)} (each load starts while one runs; a restart takes milliseconds)"
    )
    print(
        f"- builds: {len(builds.runs)} ({facts['failed_builds']} failed), "
        f"{min(durations):.0f}-{max(durations):.0f} s each: `{' '.join(builds.command()[1:])}`"
        if durations
        else "- builds: none finished"
    )
    return facts


def main() -> None:
    args = checked_arguments(__doc__.splitlines()[0], 20, "loads per page in each phase (default 20)")
    db: Path = args.db
    recorded = last_build_as_of(db)
    as_of = recorded.dbt_var if recorded else None  # the text `build --as-of` takes
    if as_of is None or not serving_path(db).exists():
        raise SystemExit(f"error: {db} was never built (no marts.build_info or serving file): build it first")
    work = Path(tempfile.mkdtemp(prefix="dashboard-during-build-"))
    builds, watch, shots = Builds(db, as_of, work), PublishWatch(serving_path(db)), []
    for old in SHOTS.glob("*.png"):
        old.unlink()
    print(f"warehouse {db} as of {as_of}; build logs in {work}", flush=True)
    with chromium() as browser, open_dashboard(browser, db, "dashboard-during-build-") as (server, page):
        reload(page, f"{server.url}/{PAGES[-1].address}", PAGES[-1].title)  # the first click leaves another page
        load_average = {QUIET: os.getloadavg()}
        if load_average[QUIET][0] > 1:
            print(f"warning: load average {load_average[QUIET][0]:.1f}: the machine is not quiet", flush=True)
        quiet = rounds(page, db, server.url, QUIET, args.loads, shots, None)
        watch.start()
        builds.start()
        try:
            during = under_load(page, db, server.url, args.loads, shots, builds, watch)
            load_average[DURING] = os.getloadavg()
        except BaseException:
            builds.finish(kill=True)
            raise
        finally:
            watch.stop.set()
        print("loads done; the running build finishes (the warehouse is left built and published)", flush=True)
        builds.finish()
        server_log = server.log.read_text(errors="replace")
    for load in during:
        load.publishes_during = watch.between(load.started, load.ended)
    rows = summary(quiet, during)
    facts = report(rows, during, builds, watch, db)
    print(
        f"- load average (1, 5, 15 min) when the quiet loads began: {load_average[QUIET]}, when the last load ended: "
        f"{load_average.get(DURING)} (2 cores; other work on the machine shows here)"
    )
    if builds.gave_up:
        print(f"\n**The builds gave up**: {builds.gave_up}")
    start = quiet[0].started
    OUT.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(
        json.dumps(
            {
                "warehouse": str(db),
                "as_of": as_of,
                "loads_per_page": args.loads,
                "way": "navigate (a click in the sidebar), query cache missed",
                "build_command": builds.command(),
                "load_average_1_5_15": load_average,
                "pages": rows,
                **facts,
                "publishes_s": [round(moment - start, 3) for moment, _ in watch.changes],
                "builds_run": [
                    {**asdict(run), "started": run.started - start, "ended": (run.ended or start) - start}
                    for run in builds.runs
                ],
                "loads": [
                    {**asdict(load), "started": load.started - start, "ended": load.ended - start}
                    for load in quiet + during
                ],
                "server_log_tracebacks": server_log.count("Traceback"),
                "server_log": str(server.log),
                "build_logs": str(work),
                "screenshots": [str(path) for path in shots],
            },
            indent=2,
        )
    )
    print(
        f"\nwritten: {RESULT.relative_to(ROOT)}; dashboard log {server.log} "
        f"({server_log.count('Traceback')} tracebacks)"
    )


if __name__ == "__main__":
    main()
