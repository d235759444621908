"""No single blob stops the night: a JSON blob (one record per file, `ingest reactions <folder>`) larger than
`max_line_bytes` is quarantined unparsed (reason, length, SHA-256; no text: a blob tree holds others'
messages too), in flat memory; the folder's other blobs land.

Real files and the real command line (`python -m cli`); the peak memory is the child's own (wait4's rusage).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.ingest.test_bounded_lines import DEFAULT_MAX_LINE_BYTES, PEAK_LIMIT_BYTES, _run_measured
from tests.support.ingest import count, query, reaction_payload, rn_of


def test_a_300_mb_blob_is_quarantined_in_flat_memory_and_the_others_land(tmp_path: Path) -> None:
    folder = tmp_path / "storage" / "cb" / "tenants" / "acme" / "projects" / "docs"
    folder.mkdir(parents=True)
    good = [reaction_payload(n) for n in range(3)]
    for n, payload in enumerate(good):
        (folder / f"reaction-{n}.json").write_text(json.dumps(payload, indent=2))
    # a reaction blob whose comment never ends: 300 MB of hostile text in one file
    huge = folder / "huge.json"
    head = b'{"meta": {"kind": "turn.log.reaction", "rn": "ef:huge"}, "payload": {"reaction": {"text": "'
    block = b"<script>alert(1)</script>=cmd|' /C calc'!A0 " * 20_000
    digest = hashlib.sha256(head)
    with huge.open("wb") as handle:
        handle.write(head)
        written = len(head)
        while written < 300 * 1024 * 1024:
            handle.write(block)
            digest.update(block)
            written += len(block)
    db = tmp_path / "w.duckdb"

    result, peak = _run_measured(tmp_path, "ingest", "reactions", tmp_path / "storage", "--db", db)

    assert "Traceback" not in result.stderr + result.stdout
    assert result.returncode in (0, 1), result.stderr  # 1: rows quarantined
    assert peak < PEAK_LIMIT_BYTES, f"peak memory {peak / 1024**2:.0f} MiB"
    landed = {rn for (rn,) in query(db, "select rn from raw.turn_reactions")}
    assert landed == {rn_of(payload) for payload in good}
    rows = query(db, "select target_table, record_key, raw_text, reason from raw.quarantine")
    assert len(rows) == 1, rows
    table, key, text, reason = rows[0]
    assert table == "turn_reactions"
    assert key == "sha256:" + digest.hexdigest()
    # a blob tree holds every message of a conversation: an unparsed blob may be none of the source's, so
    # none of its text is kept (ingest.load._private)
    assert text is None
    assert reason.startswith(f"blob cb/tenants/acme/projects/docs/huge.json over {DEFAULT_MAX_LINE_BYTES:,} bytes")
    assert f"{written:,} bytes" in reason
    assert count(db, "turn_reactions") == len(good)
