"""What every page's filters read: tenants and projects to choose from, retention cutoffs.

The retention switch: "retention-filtered" hides the days the next purge removes. Marts
keyed by period carry the switch as a key (`is_retention_filtered`); the daily marts a page
slices itself are cut at `floor(policy, retained)`, the first day the policy keeps (the
same cutoff as the retained_* views, from retention_policy_windows).

The tenant and project filters: marts that precompute every filter value hold a tenant key
or all_members() (var all_members_key: every tenant); `scope_clause` picks the rows of a
filter, and a metric without a tenant (or project) answers every tenant with its
all_members() row.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

from dashboards import data


def all_members() -> str:
    """The tenant_filter / project_filter value of a rollup over every tenant or project: dbt's var
    all_members_key of the build the marts come from (marts.build_info), so a change of the var reaches the
    filters with the marts built by it."""
    return data.status().all_members_key


# The rows of metric_rates_by_period for one tenant and project filter ($tenant_filter, $project_filter).
SCOPE_CLAUSE = """
    (tenant_filter = $tenant_filter or (not is_tenant_scoped and tenant_filter = $all_members))
    and (project_filter = $project_filter or (not is_project_scoped and project_filter = $all_members))
"""


def scope_params(tenant: str | None, project: str | None) -> dict[str, Any]:
    """The parameters of SCOPE_CLAUSE: no tenant (project) chosen is the rollup over all of them."""
    everyone = all_members()
    return {"tenant_filter": tenant or everyone, "project_filter": project or everyone, "all_members": everyone}


def tenants() -> dict[str, str]:
    """Every tenant of the marts (conversations, evals, unified signals), for the filters: tenant key -> display name,
    in the order of the names. The marts' `tenant` is the one key across sources (seed `tenants`), so a tenant's
    reactions and its workspace rows are one entry. Two keys with the same name are told apart by their key."""
    names = {tenant: name for tenant, name, _ in data.status().tenant_projects}
    shared = {name for name, keys in Counter(names.values()).items() if keys > 1}
    labels = {tenant: f"{name} ({tenant})" if name in shared else name for tenant, name in names.items()}
    return dict(sorted(labels.items(), key=lambda item: (item[1].casefold(), item[0])))


def projects(tenant: str | None) -> list[str]:
    """The projects of a tenant key (of every tenant when None), for the filters."""
    return sorted(
        {
            project
            for owner, _, project in data.status().tenant_projects
            if project and (tenant is None or owner == tenant)
        }
    )


def retention_cutoffs() -> dict[str, dt.date | None]:
    """Policy -> first day it keeps (None: kept forever). Same cutoffs as the retained_* views."""
    return dict(data.status().retention_cutoffs)


def floor(policy: str, retained: bool) -> dt.date | None:
    """First day a retention-filtered daily series shows (None: no lower bound)."""
    if not retained:
        return None
    return retention_cutoffs().get(policy)
