"""Deterministic, realistic demo data for every source, in the upstream formats.

`generate(out_dir, seed=..., scale=..., as_of=...)` (`feedback-analytics demo-data`) writes,
under OUT, one module per source:

    analyzer/feedback-store/feedback.jsonl                     analyzer events of the last 90 days
    analyzer/feedback-store/archive/feedback-YYYYMMDD.jsonl    older events, one file per weekly
                                                               archive run (file date = run date)
                                                               -> demo.analyzer
    session-feedback/session_feedback.sqlite3                  legacy SQLite table (older records)
    session-feedback/session_feedback_export.jsonl             JSON-lines export (newer records)
                                                               -> demo.session_feedback
    reactions/blobs/<tenant>/<project>/<conversation>/<artifact>.json
                                                               one reaction envelope per file
    reactions/reactions_export.jsonl                           only when there are more reactions
                                                               than blob files we write (scale > ~1.2)
                                                               -> demo.reactions
    workspace/feedback.jsonl, sessions.jsonl, eval_runs.jsonl  workspace rows, nested JSON as objects
                                                               -> demo.workspace (rows from
                                                               demo.workspace_sessions, _evals, _feedback)
    sources.toml                                               a ready `ingest --config` file
                                                               -> demo.sources_toml

`demo.common` holds what they share (time frame, random streams, Arrow columns, tenants, the
JSON-lines writer); `demo.dataset` runs them. Field names and enumerations come from the source
contracts (`warehouse.contracts`); this package imports nothing else of the project.

Time frame: the history covers the 200 whole days before `as_of`; every timestamp is strictly
before `as_of` 00:00 UTC, so nothing is "after as_of" whichever time of that day a report uses.

Deliberately bad records, exactly these three, for the ingest to quarantine:
1. analyzer: one truncated JSON line in the active file `feedback.jsonl`, a few days before as_of.
2. session feedback: one line of the export whose `session_id_opaque` is the raw thread id
   "alice-s1" instead of its SHA-256.
3. reactions: one blob whose `payload.reaction.confidence` is 1.5.
Deliberate quirks that are valid data (to deduplicate or interpret, not to quarantine) are listed
in each source's module: duplicates across files (analyzer, session feedback), replaced and cleared
reactions, machine confidences around 0.70, legacy tags, trending skills, eval cells that regress,
get fixed, flip-flop or always fail.

Counts returned per source are the clean records after deduplication (what the raw tables should
hold after ingest); the bad records above are not counted.

Determinism: every random draw comes from numpy Generators seeded from `seed` (one stream per
source); every file is written in an explicit order (DuckDB `COPY ... ORDER BY`, sorted Python
lists), so the same seed, scale and as_of give byte-identical files. The workspace tenant ids are
not drawn: each is the uuid5 of the tenant's name (`demo_tenant_id`), the same for every seed, and
`seeds/tenants.csv` maps them and the reactions' tenant names to one tenant.
"""

from __future__ import annotations

from demo.analyzer import IMPROVING_SKILL, NEW_SKILL, WORSENING_SKILL, write_analyzer_jsonl
from demo.common import TENANTS, demo_tenant_id
from demo.dataset import generate

__all__ = [
    "IMPROVING_SKILL",
    "NEW_SKILL",
    "TENANTS",
    "WORSENING_SKILL",
    "demo_tenant_id",
    "generate",
    "write_analyzer_jsonl",
]
