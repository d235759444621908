"""The TOML config file (`sources.toml`): ingest reads its source sections, the nightly its `[purge]` table."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from warehouse.errors import UserError


def read_config_file(file: Path) -> dict[str, Any]:
    """The file's TOML as a dict; a folder, a missing file or invalid TOML is a one-line error."""
    if file.is_dir():
        raise UserError(f"config file {file} is a folder: give the TOML file in it (e.g. {file / 'sources.toml'})")
    if not file.is_file():
        raise UserError(f"config file {file} does not exist: check the path (see demo-data's sources.toml)")
    try:
        return tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"config file {file} is not valid TOML: {exc}") from None
