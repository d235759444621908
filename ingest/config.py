"""`ingest --config FILE`: a TOML file naming every source to load.

    [[analyzer]]
    path = "analyzer/feedback-store"     # relative to the config file
    no_snippets = false

    [[session_feedback]]
    postgres_dsn_env = "SESSION_FEEDBACK_PG_DSN"   # the DSN itself never sits in the file

    [[reactions]]
    postgres_dsn_env = "REACTIONS_PG_DSN"          # the platform's index: every kdcube_* schema,
    schemas = ["kdcube_acme_support"]              # or only these

Sections: analyzer, session_feedback, reactions, workspace; and, for
`nightly`, one optional `[purge]` table:

    [purge]
    max_share = 0.5   # a delete policy removing more of its table stops the purge
    yes = false       # true: purge anyway (the first purge of a long backlog)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from warehouse.config_file import read_config_file
from warehouse.dsn import dsn_from_environment
from warehouse.errors import UserError

SECTIONS = ("analyzer", "session_feedback", "reactions", "workspace")
KEYS = {"path", "postgres_dsn_env", "no_snippets", "schemas"}
SETTINGS = ("purge",)  # read by operations (operations/retention.py)


@dataclass(frozen=True)
class SourceEntry:
    section: str
    path: Path | None
    postgres_dsn: str | None
    no_snippets: bool
    schemas: tuple[str, ...] = ()  # reactions: only these index schemas


def read_config(file: Path) -> list[SourceEntry]:
    data = read_config_file(file)
    unknown = set(data) - set(SECTIONS) - set(SETTINGS)
    if unknown:
        raise UserError(
            f"config file {file}: unknown section(s) {', '.join(sorted(unknown))}; use {', '.join(SECTIONS)}"
        )
    entries = []
    for section in SECTIONS:
        for index, entry in enumerate(data.get(section, []), start=1):
            where = f"config file {file}, [[{section}]] #{index}"
            if not isinstance(entry, dict):
                raise UserError(f"{where}: write it as [[{section}]] with path = ... or postgres_dsn_env = ...")
            if "postgres_dsn" in entry or "dsn" in entry:
                raise UserError(
                    f"{where}: a DSN may not be written in the config; put it in an environment "
                    "variable and name that with postgres_dsn_env"
                )
            extra = set(entry) - KEYS
            if extra:
                raise UserError(f"{where}: unknown key(s) {', '.join(sorted(extra))}; use {', '.join(sorted(KEYS))}")
            dsn = None
            if "postgres_dsn_env" in entry:
                if section == "analyzer":
                    raise UserError(f"{where}: the analyzer is read from files only")
                dsn = dsn_from_environment(str(entry["postgres_dsn_env"]), where)
            path = (file.parent / entry["path"]) if "path" in entry else None
            if path is None and dsn is None:
                raise UserError(f"{where}: give a path or a postgres_dsn_env")
            schemas = entry.get("schemas", [])
            if schemas and (section != "reactions" or dsn is None):
                raise UserError(f"{where}: schemas names index schemas: only for [[reactions]] with postgres_dsn_env")
            if not isinstance(schemas, list) or not all(isinstance(name, str) for name in schemas):
                raise UserError(f'{where}: write schemas as a list of names, e.g. schemas = ["kdcube_acme_support"]')
            entries.append(SourceEntry(section, path, dsn, bool(entry.get("no_snippets", False)), tuple(schemas)))
    if not entries:
        raise UserError(f"config file {file} names no source: add [[analyzer]], [[session_feedback]], ... sections")
    return entries
