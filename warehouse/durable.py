"""Making a written file or a rename survive a crash: fsync of a file or of the folder that holds it."""

from __future__ import annotations

import os
from pathlib import Path


def fsync(path: Path) -> None:
    """Flush a file's bytes, or a folder's entries (after a rename into it), to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
