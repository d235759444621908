"""The pre-commit hooks (.pre-commit-config.yaml) run what `make lint` runs: the same commands on the same paths,
each a local hook calling the project's venv tools (nothing downloaded at commit time)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
VARIABLE = re.compile(r"\$\((\w+)\)")


def make_lint_commands() -> set[str]:
    """The commands of the Makefile's `lint` recipe, its variables expanded (`$(wildcard ...)` to what exists),
    `VAR=value command` written as `env VAR=value command`; the echo lines and the shell's if/else left out."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    variables = dict(re.findall(r"^(\w+) *\??:?= *(.*)$", text, re.MULTILINE))

    def expand(value: str) -> str:
        wildcard = re.fullmatch(r"\$\(wildcard (.*)\)", value.strip())
        if wildcard:
            return " ".join(name for name in wildcard[1].split() if (ROOT / name).exists())
        return VARIABLE.sub(lambda match: expand(variables[match[1]]), value)

    recipe = re.search(r"^lint:.*\n((?:\t.*\n)+)", text, re.MULTILINE)
    assert recipe, "Makefile: no lint recipe"
    commands = set()
    for line in recipe[1].splitlines():
        line = line.strip().lstrip("@").removesuffix("\\").strip().removesuffix(";").strip()
        if not line or line.split()[0] in {"echo", "if", "else", "fi"}:
            continue
        command = expand(line)
        commands.add(f"env {command}" if re.match(r"\w+=", command) else command)
    return commands


def test_the_hooks_run_what_make_lint_runs() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    assert {repo["repo"] for repo in config["repos"]} == {"local"}
    assert {hook["language"] for hook in hooks} == {"system"}
    assert not any(hook.get("pass_filenames", True) for hook in hooks), "make lint checks whole folders"
    commands = {" ".join([hook["entry"], *hook.get("args", [])]) for hook in hooks}
    for command in commands:
        assert command.removeprefix("env FEEDBACK_DB=:memory: ").startswith(".venv/bin/"), command
    lint = make_lint_commands()
    assert len(lint) == 4
    assert commands == lint
