"""Model, source and column descriptions name a var or a retention policy, never its current value: the
defaults live in dbt_project.yml (vars) and seeds/retention_policies.csv (keep_days), and a description that
copies them stops being true when they change. Worked examples (the descriptions of unit tests) state their
own inputs and are left out."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
VARS = sorted(yaml.safe_load((ROOT / "dbt_project.yml").read_text(encoding="utf-8"))["vars"])
# "365 by default", "(var, default 5)", "`min_invocations` (5)", "period_lengths_days (1, 7, 30, 90)",
# "the 365-day policy", "Retention: 180 days"
DEFAULT_VALUE = re.compile(
    r"\d+(\.\d+)? by default|default \d|\d+-day policy|Retention: \d|\b(" + "|".join(VARS) + r")`? \(\d"
)


def descriptions(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(where, text) of every `description` in a dbt YAML tree, unit tests left out."""
    if isinstance(node, dict):
        here = f"{path}/{node['name']}" if isinstance(node.get("name"), str) else path
        for key, value in node.items():
            if key == "unit_tests":
                continue
            if key == "description" and isinstance(value, str):
                yield here, value
            else:
                yield from descriptions(value, here)
    elif isinstance(node, list):
        for item in node:
            yield from descriptions(item, path)


def test_no_description_copies_a_default() -> None:
    files = sorted((ROOT / "models").rglob("*.yml")) + sorted((ROOT / "seeds").rglob("*.yml"))
    docs = sorted((ROOT / "models").rglob("*.md"))
    assert files and docs
    found = [
        f"{file.relative_to(ROOT)}{where}: {match.group(0)!r}"
        for file in files
        for where, text in descriptions(yaml.safe_load(file.read_text(encoding="utf-8")))
        for match in DEFAULT_VALUE.finditer(" ".join(text.split()))
    ]
    found += [
        f"{file.relative_to(ROOT)}: {match.group(0)!r}"
        for file in docs
        for match in DEFAULT_VALUE.finditer(" ".join(file.read_text(encoding="utf-8").split()))
    ]
    assert not found, "say the var's or the policy's name instead of its value:\n" + "\n".join(found)
