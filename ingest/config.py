"""`ingest --config FILE`: a TOML file naming every source to load.

    [[analyzer]]
    path = "analyzer/feedback-store"     # relative to the config file
    no_snippets = false

    [[session_feedback]]
    postgres_dsn_env = "SESSION_FEEDBACK_PG_DSN"   # the DSN itself never sits in the file

    [[reactions]]
    postgres_dsn_env = "REACTIONS_PG_DSN"          # the platform's index: every kdcube_* schema,
    schemas = ["kdcube_acme_support"]              # or only these

Sections: analyzer, session_feedback, reactions, workspace; one optional
`[limits]` table, the bounds of a JSON-lines line (ingest/line_limits.py; a
line over them is quarantined unparsed):

    [limits]
    max_line_bytes = 16777216   # 16 MiB, the default
    max_depth = 64              # levels of [ and {, the default

and, for `nightly`, one optional `[purge]` table:

    [purge]
    max_share = 0.5   # a delete policy removing more of its table stops the purge
    yes = false       # true: purge anyway (the first purge of a long backlog)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ingest.line_limits import LineLimits
from warehouse.config_file import read_config_file
from warehouse.errors import UserError

SECTIONS = ("analyzer", "session_feedback", "reactions", "workspace")
KEYS = {"path", "postgres_dsn_env", "no_snippets", "schemas"}
SETTINGS = ("purge", "limits", "alerts")  # purge: operations/retention.py; alerts: operations/alerts (delivery)
LIMIT_KEYS = {"max_line_bytes": 1024, "max_depth": 1}  # the least value of each


@dataclass(frozen=True)
class SourceEntry:
    section: str
    path: Path | None
    postgres_dsn: str | None
    no_snippets: bool
    schemas: tuple[str, ...] = ()  # reactions: only these index schemas
    limits: LineLimits = LineLimits()
    postgres_dsn_env: str | None = None
    problem: str | None = None  # why this source cannot be read (its variable is not set): the others still are

    @property
    def name(self) -> str:
        """The source as the summary names it (never its DSN: the variable's name)."""
        where = [str(self.path)] if self.path else []
        where += [f"${self.postgres_dsn_env}"] if self.postgres_dsn_env else []
        return f"{self.section} {' '.join(where)}".strip()


def read_config(file: Path) -> list[SourceEntry]:
    data = read_config_file(file)
    unknown = set(data) - set(SECTIONS) - set(SETTINGS)
    if unknown:
        raise UserError(
            f"config file {file}: unknown section(s) {', '.join(sorted(unknown))}; use {', '.join(SECTIONS)}"
        )
    limits = read_limits(file, data.get("limits", {}))
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
            dsn, var, problem = None, entry.get("postgres_dsn_env"), None
            if var is not None:
                if section == "analyzer":
                    raise UserError(f"{where}: the analyzer is read from files only")
                if not isinstance(var, str) or not var:
                    raise UserError(f'{where}: postgres_dsn_env names an environment variable, e.g. "PG_DSN"')
                dsn = os.environ.get(var)
                if not dsn:
                    problem = f"environment variable {var} is not set: export it with the DSN"
            path = (file.parent / entry["path"]) if "path" in entry else None
            if path is None and var is None:
                raise UserError(f"{where}: give a path or a postgres_dsn_env")
            schemas = entry.get("schemas", [])
            if schemas and (section != "reactions" or var is None):
                raise UserError(f"{where}: schemas names index schemas: only for [[reactions]] with postgres_dsn_env")
            if not isinstance(schemas, list) or not all(isinstance(name, str) for name in schemas):
                raise UserError(f'{where}: write schemas as a list of names, e.g. schemas = ["kdcube_acme_support"]')
            no_snippets = bool(entry.get("no_snippets", False))
            entries.append(SourceEntry(section, path, dsn, no_snippets, tuple(schemas), limits, var, problem))
    if not entries:
        raise UserError(f"config file {file} names no source: add [[analyzer]], [[session_feedback]], ... sections")
    return entries


def read_limits(file: Path, table: object) -> LineLimits:
    """The `[limits]` table: whole numbers, at least LIMIT_KEYS' least values; a key left out keeps its default."""
    where = f"config file {file}, [limits]"
    if not isinstance(table, dict):
        raise UserError(f"{where}: write it as a table: [limits] with max_line_bytes = ... and max_depth = ...")
    unknown = set(table) - set(LIMIT_KEYS)
    if unknown:
        raise UserError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; use {', '.join(LIMIT_KEYS)}")
    for key, least in LIMIT_KEYS.items():
        value = table.get(key, least)
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise UserError(f"{where}: {key} must be a whole number of at least {least}, not {value!r}")
    return LineLimits(**table)
