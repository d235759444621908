"""Private files: everything the command line creates is its owner's only, whatever the umask.

The real command line under umask 022 (a typical shared machine): demo-data, ingest, build, export, report
(and its PDF when chromium is there), purge (the archive) and nightly (its lock and log) in a fresh folder.
Every file they created is 0600 and every folder 0700; with FEEDBACK_GROUP_READ=1, 0640 and 0750. Root
ignores permission bits, so the tests check the modes, not access.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.dashboard import CHROMIUM as CHROMIUM_PATH
from tests.support.environment import in_ci, unavailable
from tests.support.ingest import cli_env
from warehouse.location import serving_path

AS_OF = "2026-11-01"
ROOT = Path(__file__).resolve().parents[2]


def run(*args: object, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """`python -m cli ARGS...` under umask 022; it must succeed."""
    result = subprocess.run(
        [sys.executable, "-m", "cli", *(str(a) for a in args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        preexec_fn=lambda: os.umask(0o022),
        check=False,
    )
    assert result.returncode == 0, f"{args[0]} exited {result.returncode}:\n{result.stdout[-2000:]}{result.stderr}"
    return result


def modes(root: Path) -> dict[str, int]:
    """Permission bits of everything under `root` (not `root` itself, which the test made), by relative path."""
    found = {}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(folder) / name
            found[str(path.relative_to(root))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def wrong_modes(root: Path, file_mode: int, folder_mode: int) -> dict[str, str]:
    return {
        name: oct(mode)
        for name, mode in modes(root).items()
        if mode != (folder_mode if (root / name).is_dir() else file_mode)
    }


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh folder where the whole command line ran, private by default."""
    root = tmp_path_factory.mktemp("private")
    os.chmod(root, 0o755)
    db = root / "warehouse" / "feedback.duckdb"
    env = cli_env(DBT_TARGET_PATH=str(root / "dbt" / "target"), DBT_LOG_PATH=str(root / "dbt" / "logs"))
    run("demo-data", root / "data", "--as-of", AS_OF, "--scale", "0.02", "-q", env=env)
    (root / "warehouse").mkdir(mode=0o700)
    run("ingest", "--config", root / "data" / "sources.toml", "--db", db, "-q", env=env)
    run("build", "--as-of", AS_OF, "--db", db, env=env)
    run("export", "retained_analyzer_events", "--format", "csv", "--out", root / "exports" / "csv", "--db", db, env=env)
    report = ["report", "--out", root / "warehouse" / "report.html", "--as-of", AS_OF, "--db", db]
    run(*report, *(["--pdf"] if CHROMIUM_PATH.exists() else []), env=env)
    run("purge", "--as-of", AS_OF, "--yes", "--db", db, env=env)
    run("nightly", "--config", root / "data" / "sources.toml", "--as-of", AS_OF, "--db", db, env=env)
    return root


def test_every_file_the_command_line_created_is_private_under_umask_022(pipeline: Path) -> None:
    db = pipeline / "warehouse" / "feedback.duckdb"
    expected = [
        db,
        serving_path(db),
        db.with_name(db.name + ".nightly.log"),
        db.with_name(db.name + ".nightly.lock"),
        serving_path(db).with_name(serving_path(db).name + ".lock"),
        pipeline / "exports" / "csv" / "retained_analyzer_events.csv",
        pipeline / "warehouse" / "report.html",
        pipeline / "dbt" / "target" / "manifest.json",
    ]
    if CHROMIUM_PATH.exists():
        expected.append(pipeline / "warehouse" / "report.pdf")
    elif in_ci():  # the PDF's mode is part of what this test shows: CI must print it
        unavailable("browser", f"chromium not found at {CHROMIUM_PATH}: the report's PDF was not printed")
    missing = [str(path) for path in expected if not path.is_file()]
    assert not missing, f"the pipeline did not create {missing}"
    archive = list((pipeline / "warehouse" / "feedback-archive").rglob("*.parquet"))
    assert archive, "the purge wrote no archive"
    assert wrong_modes(pipeline, 0o600, 0o700) == {}


def test_the_group_setting_grants_read_on_purpose(pipeline: Path, tmp_path: Path) -> None:
    """FEEDBACK_GROUP_READ=1: a new warehouse (and its archive), an export and a report are 0640, folders 0750."""
    root = tmp_path / "shared"
    root.mkdir()
    env = cli_env(FEEDBACK_GROUP_READ="1")
    built = pipeline / "warehouse" / "feedback.duckdb"
    run("ingest", "--config", pipeline / "data" / "sources.toml", "--db", root / "feedback.duckdb", "-q", env=env)
    run("purge", "--as-of", AS_OF, "--yes", "--db", root / "feedback.duckdb", env=env)
    run("export", "retained_analyzer_events", "--format", "parquet", "--out", root / "exports", "--db", built, env=env)
    run("report", "--out", root / "report.html", "--as-of", AS_OF, "--db", built, env=env)
    assert (root / "feedback.duckdb").is_file() and (root / "exports" / "retained_analyzer_events.parquet").is_file()
    assert list((root / "feedback-archive").rglob("*.parquet")), "the purge wrote no archive"
    assert (root / "report.html").is_file()
    assert wrong_modes(root, 0o640, 0o750) == {}


def test_a_group_setting_that_is_neither_0_nor_1_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cli", "ingest", "analyzer", str(tmp_path), "--db", str(tmp_path / "x.duckdb")],
        cwd=ROOT,
        env=cli_env(FEEDBACK_GROUP_READ="yes"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "error: FEEDBACK_GROUP_READ='yes' is neither 0 nor 1: set it to 1 to let the files' group read them, "
        "or unset it to keep them private to their owner"
    ]


# -- temporary files: unpredictable names, created exclusively; nothing written through a planted symlink --------


def victim(folder: Path) -> Path:
    """A file elsewhere that a planted symlink points at: it must keep its bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "victim.txt"
    path.write_text("the victim's own bytes\n")
    return path


def test_an_export_is_neither_blocked_nor_redirected_by_names_planted_in_its_folder(
    pipeline: Path, tmp_path: Path
) -> None:
    """The real command line, in a process that first plants what an attacker could: a symlink to another
    file, and a dangling one, at the temporary names an export of that process used to write."""
    db = pipeline / "warehouse" / "feedback.duckdb"
    out = tmp_path / "exports"
    out.mkdir()
    target = victim(tmp_path / "elsewhere")
    names = ["retained_analyzer_events", "retained_session_feedback"]
    planting = (
        "import os, sys\n"
        f"out = {str(out)!r}\n"
        f"os.symlink({str(target)!r}, os.path.join(out, f'.{names[0]}.csv.exporting-{{os.getpid()}}'))\n"
        f"os.symlink('/nonexistent/x', os.path.join(out, f'.{names[1]}.csv.exporting-{{os.getpid()}}'))\n"
        f"sys.argv = ['feedback-analytics', 'export', *{names!r}, '--format', 'csv', '--out', out, "
        f"'--db', {str(db)!r}]\n"
        "from cli.main import main\n"
        "main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", planting], cwd=ROOT, env=cli_env(), capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert target.read_text() == "the victim's own bytes\n"
    for name in names:
        assert (out / f"{name}.csv").is_file() and not (out / f"{name}.csv").is_symlink()
    leftovers = sorted(path.name for path in out.iterdir() if path.name.startswith("."))
    assert len(leftovers) == 2 and all(".exporting-" in name for name in leftovers)  # the planted ones, untouched
    assert all((out / name).is_symlink() for name in leftovers)


def test_printing_the_pdf_does_not_write_through_a_planted_symlink(pipeline: Path, tmp_path: Path) -> None:
    if not CHROMIUM_PATH.exists():  # skipped locally, a failure under CI (tests/support/environment.py)
        unavailable("browser", f"chromium not found at {CHROMIUM_PATH}: apt-get install -y chromium")
    db = pipeline / "warehouse" / "feedback.duckdb"
    out = tmp_path / "report"
    out.mkdir()
    target = victim(tmp_path / "elsewhere")
    (out / ".report.pdf.printing").symlink_to(target)  # the name the PDF was printed under
    run("report", "--out", out / "report.html", "--as-of", AS_OF, "--db", db, "--pdf", env=cli_env())
    assert target.read_text() == "the victim's own bytes\n"
    assert (out / "report.pdf").read_bytes().startswith(b"%PDF")
    assert sorted(path.name for path in out.iterdir()) == [".report.pdf.printing", "report.html", "report.pdf"]


def test_the_nightly_log_and_lock_are_never_written_through_a_symlink(tmp_path: Path) -> None:
    """A symlink planted at the nightly's log (or lock) name: the run refuses in one line, the target keeps
    its bytes."""
    for suffix in (".nightly.log", ".nightly.lock"):
        db = tmp_path / suffix.strip(".").replace(".", "-") / "feedback.duckdb"
        db.parent.mkdir()
        target = victim(tmp_path / f"elsewhere{suffix}")
        planted = db.with_name(db.name + suffix)
        planted.symlink_to(target)
        result = subprocess.run(
            [sys.executable, "-m", "cli", "nightly", "--as-of", AS_OF, "--db", str(db)],
            cwd=ROOT,
            env=cli_env(),
            capture_output=True,
            text=True,
            timeout=600,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert target.read_text() == "the victim's own bytes\n", f"{suffix}: written through the symlink"
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert result.stderr.strip().splitlines() == [
            f"error: {planted} is a symlink: refusing to write through it; remove it (the file is created anew)"
        ]
