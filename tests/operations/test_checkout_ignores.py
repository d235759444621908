"""A checkout stays clean: what the project writes beside a warehouse in it is ignored by git.

A git clone of this repository in a temporary folder, with this checkout's
.gitignore; the clone's own code runs there as an operator would from a
checkout (`python -m cli ...`, no FEEDBACK_DB: the default `./feedback.duckdb`):
demo data, then a nightly (ingest, purge with its archive, build, publish),
then `git status` must show nothing it did not show before. The names written
only while a step runs (a publish's temporary folder, a forget's rewrite,
DuckDB's spill folder) are checked with `git check-ignore`, built from the
constants the code names them with.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from operations.erasure_rewrite import REWRITE_SUFFIX
from operations.serving import TEMPORARY_MARK
from tests.support.dbt import REPO
from tests.support.operations import AS_OF
from warehouse.build_record import record_path
from warehouse.location import DEFAULT_DB, serving_path

pytestmark = pytest.mark.slow


def git(checkout: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=checkout, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
    )


def status(checkout: Path) -> list[str]:
    result = git(checkout, "status", "--porcelain", "--untracked-files=all")
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def run_in(checkout: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m cli ARGS` of the clone's code, from the clone's root, as in a checkout (no FEEDBACK_* from here)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FEEDBACK_", "DBT_"))}
    env.update(PYTHONPATH=str(checkout), DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    result = subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=checkout,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, f"{args}: exit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.fail(f"{REPO} is not a git checkout (or git is missing): this test clones it")
    folder = tmp_path_factory.mktemp("checkout") / "feedback-analytics"
    cloned = subprocess.run(
        ["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(folder)], capture_output=True, text=True
    )
    assert cloned.returncode == 0, cloned.stderr
    shutil.copyfile(REPO / ".gitignore", folder / ".gitignore")  # this checkout's rules, committed or not
    return folder


def test_a_nightly_in_a_checkout_leaves_git_status_as_it_was(checkout: Path) -> None:
    before = status(checkout)
    run_in(checkout, "demo-data", "demo-data", "--scale", "0.02", "--as-of", str(AS_OF), "-q")
    run_in(checkout, "nightly", "--config", "demo-data/sources.toml", "--as-of", str(AS_OF))

    db = checkout / DEFAULT_DB
    written = sorted(p.name for p in checkout.iterdir() if p.name.startswith(db.stem))
    # the run wrote what this test is about: the warehouse, the serving file and its lock, the nightly's lock
    # and log, the build record, and the purge's archive (the demo has analyzer events older than the archive
    # policy's cutoff)
    for name in (
        db.name,
        serving_path(db).name,
        serving_path(db).name + ".lock",
        db.name + ".nightly.lock",
        db.name + ".nightly.log",
        f"{db.stem}-archive",
        record_path(db).name,  # the build's record, which readers compare with the serving file
    ):
        assert name in written, f"{name} was not written: {written}"
    assert status(checkout) == before, f"new in git status after a nightly (written: {written})"


def test_files_written_only_while_a_step_runs_are_ignored_too(checkout: Path) -> None:
    db, serving = DEFAULT_DB, serving_path(Path(DEFAULT_DB)).name
    names = [
        f"{db}.wal",
        f"{serving}.wal",
        f"{serving}{TEMPORARY_MARK}12345/{serving}",  # a publish's temporary folder
        f"{db}{REWRITE_SUFFIX}",  # forget's fresh copy of the warehouse
        f"{db}{REWRITE_SUFFIX}.wal",
        f"{db}.tmp/duckdb_temp_storage-0.tmp",  # DuckDB's spill folder (temp_directory's default)
        f"{Path(db).stem}-spark/raw/analyzer_events/part-0.parquet",  # the Spark lake (operations/spark.py)
    ]
    result = git(checkout, "check-ignore", "--verbose", "--non-matching", *names)
    not_ignored = [line.split("\t", 1)[1] for line in result.stdout.splitlines() if line.startswith("::")]
    assert not not_ignored, f"not ignored by git: {not_ignored}"
