"""CHANGELOG.md has released versions (Keep a Changelog): `[Unreleased]` first, then one section per release,
newest first, and the newest is the project's version in pyproject.toml and dbt_project.yml."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def sections() -> list[str]:
    return re.findall(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.MULTILINE)


def test_unreleased_then_releases_newest_first() -> None:
    found = sections()
    assert found[0] == "[Unreleased]"
    releases = [re.fullmatch(r"\[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})", section) for section in found[1:]]
    assert releases and all(releases), f"not '[X.Y.Z] - YYYY-MM-DD': {found[1:]}"
    versions = [tuple(int(part) for part in release.groups()[:3]) for release in releases if release]
    dates = [release[4] for release in releases if release]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    assert dates == sorted(dates, reverse=True)


def test_the_newest_release_is_the_project_version() -> None:
    newest = re.fullmatch(r"\[(.+)\] - .+", sections()[1])
    assert newest
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    dbt = yaml.safe_load((ROOT / "dbt_project.yml").read_text(encoding="utf-8"))["version"]
    assert newest[1] == project == dbt
