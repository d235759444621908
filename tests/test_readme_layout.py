"""The README's "Where things live" stays true: every file and folder it names exists, and every module and
sub-package of the Python packages it lists is named in its row (a new module without a line in the README
fails here)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# top-level folders the table describes by role, not module by module
NOT_PACKAGES = {"models", "seeds", "macros", "tests", "docs"}


def rows() -> dict[str, str]:
    """First cell (the folder, e.g. `ingest/`) -> the whole row, for each row of the section's table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Where things live", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("| `")]
    assert table, "README: no table under 'Where things live'"
    return {line.split("|")[1].strip(): line for line in table}


def row_folders(first_cell: str) -> list[Path]:
    return [ROOT / name for name in re.findall(r"`([^`<]+)/`", first_cell)]


def named_paths(row: str) -> list[str]:
    """The backticked file and folder names of a row (`load.py`, `report/`, `tests/ingest/`), bench's
    `bench.<module>` as `<module>.py`; names with a placeholder (`<source>`, `{a,b}`) are left out."""
    names = [name for name in re.findall(r"`([^`\s<{]+(?:\.py|/))`", row)]
    return names + [f"{module}.py" for module in re.findall(r"`(?:python -m )?bench\.(\w+)`", row)]


def test_every_file_and_folder_the_table_names_exists() -> None:
    missing = []
    for first_cell, row in rows().items():
        folders = row_folders(first_cell)
        for name in named_paths(row):
            candidates = [ROOT / name, *(folder / name for folder in folders)]
            below = [
                path
                for folder in folders
                for path in folder.rglob(name.rstrip("/"))
                if str(path).endswith(name.rstrip("/"))
            ]
            if not any(path.exists() for path in candidates) and not below:
                missing.append(f"{first_cell}: {name}")
    assert not missing, f"README 'Where things live' names what does not exist: {missing}"


def test_every_python_package_has_a_row_naming_each_of_its_modules() -> None:
    table = rows()
    packages = sorted(
        path
        for path in ROOT.iterdir()
        if path.is_dir() and not path.name.startswith(".") and path.name not in NOT_PACKAGES and any(path.glob("*.py"))
    )
    assert packages, "no Python package found at the top level"
    unnamed = []
    for package in packages:
        row = next((line for cell, line in table.items() if f"`{package.name}/`" in cell), None)
        if row is None:
            unnamed.append(f"{package.name}/ (no row)")
            continue
        for child in sorted(package.iterdir()):
            if child.suffix == ".py" and not child.name.startswith("__"):
                named = any(f"{name}`" in row for name in (f"`{child.name}", f"`{child.stem}", f"bench.{child.stem}"))
            elif child.is_dir() and any(child.glob("*.py")):
                named = f"{child.name}/" in row
            else:
                continue
            if not named:
                unnamed.append(str(child.relative_to(ROOT)))
    assert not unnamed, f"README 'Where things live' does not name: {unnamed}"


def test_every_macro_folder_is_named() -> None:
    row = next(line for cell, line in rows().items() if "`macros/`" in cell)
    unnamed = [
        path.name for path in sorted((ROOT / "macros").iterdir()) if path.is_dir() and f"`{path.name}/`" not in row
    ]
    assert not unnamed, f"README 'Where things live' does not name macros/: {unnamed}"
