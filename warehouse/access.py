"""Who may read what: a reader's identity and the tenant scope it is granted (docs/security.md).

`Identity` is who asks: the person at the machine (`via="local"`: the dashboard on loopback with no
sign-in, or the command line, which can read the warehouse file anyway), or a signed-in user (`"oidc"`:
Streamlit's st.login; `"proxy"`: the identity header of a trusted authenticating proxy).

`Scope` is what that identity may read: every tenant and the sources that have no tenant (`EVERYTHING`),
or a set of tenant keys (the marts' `tenant` column, seed `tenants`), possibly empty. Rows of sources
without a tenant (session feedback, analyzer events) and rollups over every tenant belong to `EVERYTHING`
only. Scopes are enforced where the marts are read (dashboards/data.py, operations/export.py), never only
in a selector.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from warehouse.errors import UserError


@dataclass(frozen=True)
class Identity:
    user: str | None  # the signed-in user's e-mail or subject; None for the local operator
    groups: tuple[str, ...] = ()
    via: str = "local"  # "local" | "oidc" | "proxy"


@dataclass(frozen=True)
class Scope:
    tenants: frozenset[str] | None  # None: every tenant, and the sources that have none

    @classmethod
    def only(cls, tenants: Iterable[str]) -> Scope:
        return cls(frozenset(tenants))

    @property
    def is_all(self) -> bool:
        return self.tenants is None

    def allows(self, tenant: str | None) -> bool:
        """May this scope read rows of `tenant` (None: a source or rollup without one)?"""
        if self.tenants is None:
            return True
        return tenant is not None and tenant in self.tenants

    def narrowed(self, tenant: str | None) -> Scope:
        """This scope cut to one tenant (None: unchanged); a tenant outside it leaves nothing."""
        if tenant is None:
            return self
        return Scope(frozenset({tenant}) & (self.tenants if self.tenants is not None else frozenset({tenant})))


EVERYTHING = Scope(None)  # every tenant and the sources without one
NOTHING = Scope(frozenset())  # a signed-in user the access map does not name


ALL = "all"  # in an access map: every tenant and the sources without one


@dataclass(frozen=True)
class AccessMap:
    """Who may read which tenants: users (e-mail or subject) and groups, each to tenant keys or "all".

    A user's scope is the union of their own entry and the entries of every group they are in; a user
    the map does not name, by themselves or through a group, gets `NOTHING`. Names are compared
    case-insensitively (identity providers differ in how they case e-mail addresses).
    """

    file: Path
    users: dict[str, Scope]
    groups: dict[str, Scope]

    def scope_for(self, identity: Identity) -> Scope:
        if identity.via == "local":
            return EVERYTHING  # the person at the machine can read the warehouse file anyway
        grants = [self.users.get(_name(identity.user))] if identity.user else []
        grants += [self.groups.get(_name(group)) for group in identity.groups]
        granted = [scope for scope in grants if scope is not None]
        if any(scope.is_all for scope in granted):
            return EVERYTHING
        return Scope.only(tenant for scope in granted for tenant in scope.tenants or ())


def load_access_map(path: Path) -> AccessMap:
    """The access map file (TOML), validated; every mistake is a one-line `UserError` naming the file and entry.

    [users]
    "lead@acme.example" = ["acme"]
    "ops@acme.example" = "all"

    [groups]
    analysts = "all"
    """
    if not path.is_file():
        raise UserError(f"access map {path} does not exist: write one (docs/security.md, 'Access map')")
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"access map {path} is not valid TOML: {exc}") from None
    unknown = sorted(set(document) - {"users", "groups"})
    if unknown:
        raise UserError(f"access map {path}: unknown section [{unknown[0]}]; the sections are [users] and [groups]")
    sections = {section: _entries(path, section, document.get(section, {})) for section in ("users", "groups")}
    if not sections["users"] and not sections["groups"]:
        raise UserError(f"access map {path} names no user and no group: nobody could read anything")
    return AccessMap(path, sections["users"], sections["groups"])


def _name(text: str) -> str:
    return text.strip().casefold()


def _entries(path: Path, section: str, table: object) -> dict[str, Scope]:
    if not isinstance(table, dict):
        raise UserError(f'access map {path}: [{section}] must be a table of names to tenant lists or "all"')
    entries: dict[str, Scope] = {}
    for name, grant in table.items():
        where = f"access map {path}, [{section}] {name!r}"
        if not name.strip() or not name.isprintable():
            raise UserError(f"{where}: a name must be non-empty printable text")
        if _name(name) in entries:
            raise UserError(f"{where}: named twice (names are compared case-insensitively)")
        if grant == ALL:
            entries[_name(name)] = EVERYTHING
        elif isinstance(grant, list) and all(isinstance(t, str) and t.strip() and t.isprintable() for t in grant):
            entries[_name(name)] = Scope.only(grant)
        else:
            raise UserError(f'{where}: give a list of tenant keys (["acme"]) or "all", not {grant!r}'[:300])
    return entries
