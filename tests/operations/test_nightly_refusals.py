"""`nightly` runs that must do nothing: a bad `--config` (exit 2) and another run holding the lock (exit 75).

The real command line (`python -m cli nightly`) in subprocesses. A config that
cannot be used stops the run before any step, lock or log file: the folder of
the warehouse stays empty. A run started while another process holds the
nightly lock exits 75 (EX_TEMPFAIL), so that cron tells "skipped" from
"failed" (1) (docs/operations.md, "Exit codes").
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.operations import AS_OF, cli_command, ops_env

# a config ingest and purge would both accept: one analyzer store (it need not exist to be a valid config)
VALID = '[[analyzer]]\npath = "analyzer/feedback-store"\n'


def nightly(config: Path, db: Path, work: Path, *, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, *cli_command("nightly", "--config", config, "--as-of", AS_OF, "--db", db)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=ops_env(work),
        timeout=120,
        check=False,
    )


def without_root_reads() -> tuple[str, ...]:
    """A command prefix under which file permissions hold even for root: root reads a mode-000 file through
    CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH, which setpriv drops from the bounding set of what it starts."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("running as root without setpriv (util-linux): cannot make a file unreadable to the command")
    return (setpriv, "--bounding-set=-dac_override,-dac_read_search")


def unreadable(folder: Path) -> tuple[Path, tuple[str, ...]]:
    config = folder / "sources.toml"
    config.write_text(VALID, encoding="utf-8")
    config.chmod(0)
    return config, without_root_reads()


CASES = {
    "missing": (lambda folder: (folder / "no-such.toml", ()), "does not exist"),
    "unreadable": (unreadable, "cannot read config file"),
    "not TOML": (lambda folder: (write(folder / "sources.toml", "[[analyzer]\npath = 1"), ()), "is not valid TOML"),
    # a [purge] table the purge step would refuse: on its own it would let ingest run and then fail the purge
    "bad [purge]": (
        lambda folder: (write(folder / "sources.toml", VALID + "[purge]\nmax_share = 5\n"), ()),
        "max_share must be a number from 0 to 1",
    ),
}


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("case", CASES)
def test_a_config_that_cannot_be_used_stops_the_run_before_any_step(case: str, tmp_path: Path) -> None:
    make, reason = CASES[case]
    config, prefix = make(tmp_path)
    home = tmp_path / "warehouse"
    home.mkdir()
    db = home / "feedback.duckdb"

    result = nightly(config, db, tmp_path, prefix=prefix)

    assert result.returncode == 2, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert reason in lines[0] and str(config) in lines[0] and "nothing ran" in lines[0], lines[0]
    assert result.stdout == "", "a step ran and reported:\n" + result.stdout
    # no step, no lock, no log: nothing was written beside the warehouse (nor the warehouse itself)
    assert sorted(p.name for p in home.iterdir()) == []


@pytest.fixture
def lock_holder(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """Another process holding the nightly lock of `<tmp>/warehouse/feedback.duckdb` as a running nightly would
    (flock, its pid in the file); released when the test ends. Yields (db, holder's pid)."""
    db = tmp_path / "warehouse" / "feedback.duckdb"
    db.parent.mkdir()
    lock = db.with_name(db.name + ".nightly.lock")
    code = (
        "import fcntl, os, sys\n"
        f"handle = open({str(lock)!r}, 'a+')\n"
        "fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "handle.write(f'pid {os.getpid()} since 2026-11-01 02:15:00 UTC\\n'); handle.flush()\n"
        "print('held', flush=True)\n"
        "sys.stdin.read()\n"  # until the test closes stdin
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield db, holder.pid
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def test_a_run_skipped_for_the_lock_exits_75(tmp_path: Path, lock_holder: tuple[Path, int]) -> None:
    db, holder = lock_holder
    config = write(tmp_path / "sources.toml", VALID)

    result = nightly(config, db, tmp_path)

    assert result.returncode == 75, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: nightly skipped: "), result.stderr
    assert f"pid {holder}" in lines[0] and "another nightly run is in progress" in lines[0], lines[0]
    assert result.stdout == "", "a step ran:\n" + result.stdout
    assert not db.exists(), "the skipped run opened the warehouse"
    # the log file says so too, for whoever reads it the next morning
    log = db.with_name(db.name + ".nightly.log").read_text(encoding="utf-8")
    assert len(log.splitlines()) == 1 and " WARNING nightly skipped: " in log and f"pid {holder}" in log, log
    # and the lock is still the other process's
    with db.with_name(db.name + ".nightly.lock").open("a+") as handle, pytest.raises(BlockingIOError):
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
