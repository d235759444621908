"""Files and folders readable by their owner only, whatever the umask: the warehouse, the serving file,
the archive, logs, lock files, exports and reports hold feedback text.

Every file the project creates is 0600 and every folder 0700. FEEDBACK_GROUP_READ=1 lets the owner's
group read them on purpose (0640 and 0750); 0 or unset keeps them private; any other value is an error.

DuckDB, dbt and chromium create files of their own (the warehouse and its .wal, dbt's target/ and logs/,
the PDF): the command line sets the process umask once at its start (`keep_private`), which their
children inherit. Files this code creates itself are opened with their mode and O_EXCL or O_NOFOLLOW
(`open_private`, `temporary_beside`), so neither the umask nor a symlink planted at the name decides; what
another program writes before a rename goes into a new folder of unpredictable name (`staging_folder`).
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from warehouse.errors import UserError

GROUP_READ_VARIABLE = "FEEDBACK_GROUP_READ"


def group_read() -> bool:
    """Whether FEEDBACK_GROUP_READ=1 grants the group read access (0 or unset: private)."""
    value = os.environ.get(GROUP_READ_VARIABLE, "").strip()
    if value in ("", "0"):
        return False
    if value == "1":
        return True
    raise UserError(
        f"{GROUP_READ_VARIABLE}={value!r} is neither 0 nor 1: set it to 1 to let the files' group read them, "
        "or unset it to keep them private to their owner"
    )


def file_mode() -> int:
    return 0o640 if group_read() else 0o600


def folder_mode() -> int:
    return 0o750 if group_read() else 0o700


def keep_private() -> int:
    """Set this process's umask (inherited by DuckDB's files and by dbt and chromium) so that what it creates
    has `file_mode` / `folder_mode` at most; returns the umask it replaced."""
    return os.umask(0o777 & ~folder_mode())


def make_folder(path: Path) -> None:
    """Create `path` and any missing parents with `folder_mode` (folders that exist are left as they are)."""
    missing = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    mode = folder_mode()
    for folder in reversed(missing):
        try:
            folder.mkdir(mode)
        except FileExistsError:
            continue
        os.chmod(folder, mode)  # mkdir's mode passes through the umask
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a folder")


def open_private(path: Path, *, append: bool = True) -> int:
    """A file descriptor of `path`, opened read-write (appending with `append`), created with `file_mode`
    if it is new; a symlink at `path` is refused (a UserError) rather than followed."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | (os.O_APPEND if append else 0), file_mode())
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UserError(
                f"{path} is a symlink: refusing to write through it; remove it (the file is created anew)"
            ) from None
        raise
    try:
        if os.fstat(fd).st_uid == os.getuid():
            os.fchmod(fd, os.fstat(fd).st_mode & file_mode())  # an older, wider file narrows to the setting
    except OSError:
        os.close(fd)
        raise
    return fd


def temporary_beside(final: Path, mark: str) -> Path:
    """A new empty file with an unpredictable name in `final`'s folder (`.<name>.<mark>-XXXXXXXX`), created
    exclusively with `file_mode`: write it, then rename it over `final`."""
    fd, name = tempfile.mkstemp(prefix=f".{final.name}.{mark}-", dir=final.parent)
    try:
        os.fchmod(fd, file_mode())
    finally:
        os.close(fd)
    return Path(name)


@contextmanager
def staging_folder(final: Path, prefix: str) -> Iterator[Path]:
    """Where to write `final`'s replacement when another program writes it (DuckDB's COPY and databases,
    chromium's PDF), which remove and recreate their file by name: a new folder beside `final` with an
    unpredictable name (`<prefix>XXXXXXXX`), created exclusively with mode 0700, holding the path to write
    (named like `final`). Rename that over `final` with `install`; the folder goes afterwards, with whatever
    is left in it."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=final.parent))
    try:
        yield folder / final.name
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def install(written: Path, final: Path) -> None:
    """Give a written temporary file `file_mode` and rename it over `final` (atomic on POSIX)."""
    os.chmod(written, file_mode())
    os.replace(written, final)


def made_private(path: Path) -> None:
    """Narrow a file another program just created (DuckDB's database and .wal files) to `file_mode`."""
    for created in (path, path.with_name(path.name + ".wal")):
        try:
            if not created.is_symlink() and created.stat().st_uid == os.getuid():
                os.chmod(created, created.stat().st_mode & file_mode() & 0o777)
        except FileNotFoundError:
            continue
