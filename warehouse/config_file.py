"""The TOML config file (`sources.toml`): ingest reads its source sections, the nightly its `[purge]` table."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from warehouse.errors import UserError


def read_config_file(file: Path) -> dict[str, Any]:
    """The file's TOML as a dict; a folder, a missing or unreadable file or invalid TOML is a one-line error."""
    if file.is_dir():
        raise UserError(f"config file {file} is a folder: give the TOML file in it (e.g. {file / 'sources.toml'})")
    if not file.exists():
        raise UserError(f"config file {file} does not exist: check the path (see demo-data's sources.toml)")
    if not file.is_file():  # a FIFO, a socket, a device: reading it could block or never end
        raise UserError(f"config file {file} is not a regular file: give the TOML file")
    try:
        return tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"config file {file} is not valid TOML: {exc}") from None
    except OSError as exc:  # no read permission, an I/O error
        raise UserError(f"cannot read config file {file}: {exc.strerror or exc}") from None
