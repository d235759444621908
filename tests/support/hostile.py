"""A hostile data set (no tests here): the demo sources with upstream values rewritten as markup, links, scripts,
right-to-left overrides and a 1 MB snippet, loaded and built by the real command line.

Every payload that could fetch or run something points at `Listener`, an HTTP server on loopback that counts
what reaches it, and sets `window.__pwned`; a test that shows the data in chromium asserts the listener saw
nothing and the flag stays unset. The rewrite is by value: a string equal to a key of the mapping becomes its
hostile value wherever it occurs (a skill id in every analyzer file, a golden set in sessions and eval runs),
so the sources stay consistent with each other and pass ingest's contracts.
"""

from __future__ import annotations

import http.server
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.dashboard import AS_OF, DemoWarehouse, cli

HUGE_BYTES = 1_000_000
SCALE = "0.05"


@dataclass
class Listener:
    """An HTTP server on 127.0.0.1 that records the path of every request it gets."""

    port: int = 0
    requests: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def listener() -> Iterator[Listener]:
    seen = Listener()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            seen.requests.append(self.path)
            self.send_response(204)
            self.end_headers()

        do_POST = do_GET  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    seen.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()


def payloads(base: str) -> dict[str, str]:
    """The hostile strings, each naming where it would call home (`base`: the listener)."""
    return {
        "script": f"<script>window.__pwned=1;fetch('{base}/script')</script>",
        "img": f"<img src=x onerror=\"window.__pwned=1;fetch('{base}/img')\">",
        "markdown_image": f"![x]({base}/md.png)",
        "javascript_link": "[click](javascript:window.__pwned=1)",
        "web_link": f"[web]({base}/link)",
        "anchor": f'<a href="{base}/a">a</a>',
        "bold": "<b>bold</b>",
        "strong": "**strong**",
        "rtl": "\u202eevil",
        "svg": f"<svg onload=\"window.__pwned=1;fetch('{base}/svg')\"></svg>",
        "entity": "&lt;i&gt;entity&lt;/i&gt;",
    }


def _mapping(hostile: dict[str, str]) -> dict[str, str]:
    """Demo value -> hostile value, by field: skill ids, dimensions, agent config names, a golden set, golden
    sessions' first messages (their labels), a tenant, a project, a surface."""
    return {
        # analyzer skill ids
        "deslop": hostile["script"],
        "python-refactor": hostile["img"],
        "code-review": hostile["markdown_image"],
        "cpp-expert": hostile["anchor"],
        "sql-optimizer": hostile["bold"],
        "test-writer": hostile["rtl"] + "-skill",
        "commit-message": hostile["web_link"],
        "doc-writer": hostile["javascript_link"],
        "rust-expert": hostile["strong"],
        "k8s-helper": hostile["svg"],
        "security-audit": hostile["entity"],
        # analyzer dimension hints
        "accuracy": "dim " + hostile["anchor"],
        "coverage": "dim " + hostile["script"],
        "efficiency": "dim " + hostile["markdown_image"],
        "reliability": "dim " + hostile["rtl"],
        # eval runs: agent config names (the baselines keep theirs: seeds/eval_baselines.csv names them)
        "candidate-prompt-v2": "agent " + hostile["img"],
        "candidate-model-swap": "agent " + hostile["anchor"],
        # a golden set, in sessions and eval runs alike (its baseline comparison goes: the seed names the set)
        "chat-smoke": "set " + hostile["bold"],
        # golden sessions' first messages: the matrix's row labels
        "Compare the last three PE deals in healthcare by EV/EBITDA": hostile["script"],
        "Extrais la valorisation et le chiffre d'affaires de ce mémo": hostile["img"],
        "帮我总结这家公司的融资历史": hostile["markdown_image"],
        "Add the contacts from this email thread to HubSpot": hostile["anchor"],
        "What changed in Globex's 10-K risk factors this year?": hostile["bold"] + " " + hostile["rtl"],
        "Draft a follow-up to Zoë about the Q3 pipeline": hostile["web_link"],
        # turn reactions: a tenant the seed does not know (its name is its id) and a project
        "umbrella": "tenant " + hostile["anchor"],
        "research": "project " + hostile["img"],
        # session feedback: a surface
        "api_end": "surface " + hostile["anchor"],
    }


def _replace(value: Any, mapping: dict[str, str]) -> Any:
    if isinstance(value, str):
        return mapping.get(value, value)
    if isinstance(value, dict):
        return {key: _replace(item, mapping) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace(item, mapping) for item in value]
    return value


def _rewrite_jsonl(path: Path, change: Callable[[int, dict], dict]) -> None:
    lines = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        try:
            record = json.loads(line)
        except ValueError:  # the demo's deliberately broken lines stay broken
            lines.append(line)
            continue
        lines.append(json.dumps(change(number, record), ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_hostile_sources(folder: Path, base: str, env: dict[str, str]) -> dict[str, str]:
    """The demo sources under `folder` with hostile values; returns the payloads used."""
    done = cli("demo-data", str(folder), "--as-of", AS_OF, "--scale", SCALE, "-q", env=env)
    if done.returncode != 0:
        raise RuntimeError(f"demo-data exited {done.returncode}: {done.stderr[-2000:]}")
    hostile = payloads(base)
    mapping = _mapping(hostile)
    texts = list(hostile.values())
    huge = ("A 1 MB snippet " + hostile["script"] + " ").ljust(HUGE_BYTES, "x")

    def analyzer(number: int, record: dict) -> dict:
        record = _replace(record, mapping)
        if record.get("user_message_snippet") is not None:
            record["user_message_snippet"] = texts[number % len(texts)]
        return record

    def workspace_feedback(number: int, record: dict) -> dict:
        record = _replace(record, mapping)
        if record.get("comment") is not None:
            record["comment"] = texts[number % len(texts)]
        return record

    active = folder / "analyzer" / "feedback-store" / "feedback.jsonl"
    for path in sorted((folder / "analyzer").rglob("*.jsonl")):
        _rewrite_jsonl(path, analyzer)
    # the newest event of the active file carries the 1 MB snippet
    _rewrite_jsonl(
        active,
        lambda number, record: (
            {**record, "user_message_snippet": huge} if number == len(active.read_text().splitlines()) - 1 else record
        ),
    )
    _rewrite_jsonl(folder / "workspace" / "feedback.jsonl", workspace_feedback)
    for name in ("sessions.jsonl", "eval_runs.jsonl"):
        _rewrite_jsonl(folder / "workspace" / name, lambda _, record: _replace(record, mapping))
    for path in sorted((folder / "session-feedback").glob("*.jsonl")):
        _rewrite_jsonl(path, lambda _, record: _replace(record, mapping))
    blobs = sorted((folder / "reactions").rglob("*.json"))
    records = [_replace(json.loads(path.read_text(encoding="utf-8")), mapping) for path in blobs]
    # the three conversations with the latest reactions (the page shows the most recent one first) get markup ids
    latest: dict[str, str] = {}
    for record in records:
        payload = record.get("payload") or {}
        stamp = (payload.get("reaction") or {}).get("ts") or ""
        conversation = payload.get("conversation_id")
        if conversation:
            latest[conversation] = max(latest.get(conversation, ""), stamp)
    chosen = sorted(latest, key=latest.get, reverse=True)[:3]
    renamed = {
        conversation: f"conv {hostile[kind]}"
        for conversation, kind in zip(chosen, ("script", "anchor", "markdown_image"), strict=False)
    }
    for path, record in zip(blobs, records, strict=True):
        payload = record.get("payload") or {}
        if payload.get("conversation_id") in renamed:  # the blob's path keeps the original id
            payload["conversation_id"] = renamed[payload["conversation_id"]]
        path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    return hostile


@dataclass(frozen=True)
class HostileWarehouse(DemoWarehouse):
    hostile: dict[str, str] = field(default_factory=dict)


def hostile_warehouse(root: Path, base: str) -> HostileWarehouse:
    """Write the hostile sources, then `ingest --config` and `build --as-of` them into root/hostile.duckdb."""
    root.mkdir(parents=True, exist_ok=True)
    db = root / "hostile.duckdb"
    env = {
        **os.environ,
        "FEEDBACK_DB": str(db),
        "DBT_TARGET_PATH": str(root / "dbt-target"),
        "DBT_LOG_PATH": str(root / "dbt-logs"),
    }
    hostile = write_hostile_sources(root / "data", base, env)
    for what, arguments in (
        ("ingest", ("ingest", "--config", str(root / "data" / "sources.toml"), "--db", str(db), "-q")),
        ("build", ("build", "--as-of", AS_OF, "--db", str(db))),
    ):
        done = cli(*arguments, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"{what} exited {done.returncode}:\n{(done.stdout + done.stderr)[-4000:]}")
    return HostileWarehouse(db, root / "dbt-target", root / "data", hostile)
