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

from collections.abc import Iterable
from dataclasses import dataclass


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
