"""The suite's scheduling list (tests/conftest.py, LONGEST_FIRST) names test files that exist: a renamed file would
otherwise drop out of it silently and start late."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LONGEST_FIRST

ROOT = Path(__file__).resolve().parents[1]


def test_the_longest_files_named_first_exist() -> None:
    missing = [path for path in LONGEST_FIRST if not (ROOT / path).is_file()]
    assert missing == [] and len(set(LONGEST_FIRST)) == len(LONGEST_FIRST), missing
