"""The house rules of the Python code, read from its imports (README, "Where things live"):

- `warehouse/` (the ground floor) imports none of the project's packages;
- `ingest/`, `operations/`, `dashboards/` and `demo/` import the ground floor and not each other;
- nothing imports `cli/` (the top floor), and `bench/` and `tests/` are not imported by the packages;
- no Python module (packages, tests, benchmarks, scripts) is over 600 lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("warehouse", "cli", "ingest", "operations", "dashboards", "demo")
OURS = (*PACKAGES, "bench", "tests")
ALLOWED = {
    "warehouse": {"warehouse"},
    "ingest": {"warehouse", "ingest"},
    "operations": {"warehouse", "operations"},
    "dashboards": {"warehouse", "dashboards"},
    "demo": {"warehouse", "demo"},
    "cli": set(PACKAGES),
}
MAX_LINES = 600


def modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def imported_packages(path: Path) -> set[str]:
    """The project's top-level packages a module imports (module level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found |= {name.split(".")[0] for name in names if name.split(".")[0] in OURS}
    return found


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_follow_the_floors(path: Path) -> None:
    package = path.relative_to(ROOT).parts[0]
    wrong = imported_packages(path) - ALLOWED[package]
    assert not wrong, f"{path.relative_to(ROOT)} ({package}/) imports {sorted(wrong)}"


def test_no_module_is_over_the_line_limit() -> None:
    every = [*modules(), *(path for folder in ("tests", "bench", "scripts") for path in (ROOT / folder).rglob("*.py"))]
    long = {str(p.relative_to(ROOT)): n for p in every if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_rules_see_real_imports() -> None:
    """The reader finds imports, including function-level ones (so the rules above can fail)."""
    assert imported_packages(ROOT / "cli" / "operations_commands.py") >= {"operations", "ingest", "warehouse"}
    assert imported_packages(ROOT / "cli" / "app_commands.py") >= {"demo"}  # imported inside the command
    assert imported_packages(ROOT / "warehouse" / "connection.py") == {"warehouse"}
