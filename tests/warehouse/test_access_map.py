"""The access map (warehouse/access.py): a TOML file of users and groups to tenant keys or "all".

Read from real files: the scope a signed-in identity gets (its own entry and its groups', unioned; "all" wins;
anyone not named gets nothing), and every mistake in the file as one line naming the file and the entry.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from warehouse.access import EVERYTHING, NOTHING, Identity, Scope, load_access_map
from warehouse.errors import UserError

MAP = """
[users]
"Lead@Acme.example" = ["acme"]
"ops@acme.example" = "all"
"both@acme.example" = ["acme", "globex"]

[groups]
globex-analysts = ["globex"]
admins = "all"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "access.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def access_map(tmp_path: Path):
    return load_access_map(write(tmp_path, MAP))


@pytest.mark.parametrize(
    ("identity", "expected"),
    [
        (Identity("lead@acme.example", via="oidc"), Scope.only(["acme"])),  # names compare case-insensitively
        (Identity(" LEAD@ACME.EXAMPLE ", via="proxy"), Scope.only(["acme"])),
        (Identity("ops@acme.example", via="oidc"), EVERYTHING),
        (Identity("both@acme.example", via="oidc"), Scope.only(["acme", "globex"])),
        (Identity("lead@acme.example", ("globex-analysts",), via="oidc"), Scope.only(["acme", "globex"])),
        (Identity("someone@else.example", ("globex-analysts",), via="proxy"), Scope.only(["globex"])),
        (Identity("someone@else.example", ("admins", "unknown"), via="proxy"), EVERYTHING),
        (Identity("someone@else.example", via="oidc"), NOTHING),
        (Identity("someone@else.example", ("unknown",), via="oidc"), NOTHING),
        (Identity(None, via="local"), EVERYTHING),  # the person at the machine
    ],
)
def test_scope_for(access_map, identity: Identity, expected: Scope) -> None:
    assert access_map.scope_for(identity) == expected


def test_a_group_name_is_not_a_user_name(access_map) -> None:
    # a user literally called "admins" is not in the group admins
    assert access_map.scope_for(Identity("admins", via="proxy")) == NOTHING


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[users\n", "is not valid TOML"),
        ("[people]\n'a@b.example' = 'all'\n", "unknown section [people]"),
        ("", "names no user and no group"),
        ("users = 'all'\n", "[users] must be a table"),
        ("[users]\n'a@b.example' = 'acme'\n", "[users] 'a@b.example': give a list of tenant keys"),
        ("[users]\n'a@b.example' = 'ALL'\n", "give a list of tenant keys"),
        ("[groups]\nanalysts = [1, 2]\n", "[groups] 'analysts': give a list of tenant keys"),
        ("[groups]\nanalysts = ['']\n", "[groups] 'analysts': give a list"),
        ("[users]\n'a@b.example' = ['acme']\n'A@B.example' = ['globex']\n", "named twice"),
        ("[users]\n'' = 'all'\n", "a name must be non-empty printable text"),
        ('[users]\n"a\\u0007@b.example" = "all"\n', "a name must be non-empty printable text"),
        ("[users]\n'a@b.example' = {tenants = ['acme']}\n", "give a list of tenant keys"),
    ],
)
def test_mistakes_are_one_line_naming_the_file_and_entry(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(UserError) as raised:
        load_access_map(path)
    assert message in str(raised.value)
    assert str(path) in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        load_access_map(tmp_path / "nowhere.toml")


def test_a_huge_value_is_not_echoed_whole(tmp_path: Path) -> None:
    path = write(tmp_path, "[users]\n'a@b.example' = '" + "x" * 100_000 + "'\n")
    with pytest.raises(UserError) as raised:
        load_access_map(path)
    assert len(str(raised.value)) < 500
