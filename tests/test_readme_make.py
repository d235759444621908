"""The README's `make demo VARIABLE=value` commands do what it says: make passes each value on (`make -n`: the
commands only printed, nothing run)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# what each variable of `make demo` must reach: the dashboard's port, the as-of of the demo data and the build
REACHES = {"DASHBOARD_PORT": ["dashboard --port {}"], "AS_OF": ["demo-data demo-data --as-of {}", "build --as-of {}"]}


def readme_make_demo() -> dict[str, str]:
    """VARIABLE -> value of every `make demo VARIABLE=value` the README names."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return dict(re.findall(r"`make demo (\w+)=([^`\s]+)`", text))


def test_the_readme_names_the_demo_port_and_as_of() -> None:
    named = readme_make_demo()
    assert set(named) >= set(REACHES), f"README names `make demo` with {sorted(named)}, not {sorted(REACHES)}"


@pytest.mark.parametrize("variable", sorted(REACHES))
def test_make_demo_passes_the_value_on(variable: str) -> None:
    if shutil.which("make") is None:
        pytest.fail("make is not installed: the README's quick start needs it")
    value = readme_make_demo().get(variable)
    assert value, f"README names no `make demo {variable}=...`"
    printed = subprocess.run(
        ["make", "-n", "demo", f"{variable}={value}"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert printed.returncode == 0, printed.stderr
    for expected in REACHES[variable]:
        assert expected.format(value) in printed.stdout, f"{expected.format(value)!r} not in:\n{printed.stdout}"
