"""The sidebar's global filters: as-of day, period, tenant, project, retention switch.

The entry point (app.py) draws them once per run, before the page; pages read
the result with `current()`. Every widget is bound to a URL query parameter
(`?period=7&tenant=Initech`), so a filtered view can be shared as a link.

The tenant filter lists the tenants' display names and filters by the tenant
key, the one key the marts give a tenant across sources (seed `tenants`): a
tenant's turn reactions and its workspace rows are one choice.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import streamlit as st

from dashboards import data, text
from dashboards.queries import scope

DEFAULT_PERIOD = 30  # the period a page opens with (and the report's default), when the marts hold it


def periods(status: data.WarehouseStatus) -> tuple[int, ...]:
    """The periods a page offers: those metric_rates_by_period holds (var period_lengths_days), a single day left
    out (too few signals for a page's comparison; the report offers it)."""
    return tuple(days for days in status.periods if days > 1) or (DEFAULT_PERIOD,)


def default_period(status: data.WarehouseStatus) -> int:
    offered = periods(status)
    return DEFAULT_PERIOD if DEFAULT_PERIOD in offered else offered[-1]


ALL = "All"
_STATE_KEY = "_filters"


@dataclass(frozen=True)
class Filters:
    as_of: dt.date
    period_days: int = DEFAULT_PERIOD
    tenant: str | None = None  # the tenant key the marts' `tenant` columns hold
    tenant_name: str | None = None  # its display name
    project: str | None = None
    retained: bool = True

    @property
    def start(self) -> dt.date:
        """First day of the period: the period holds the N days ending on the as-of day."""
        return self.as_of - dt.timedelta(days=self.period_days - 1)

    @property
    def end(self) -> dt.date:
        return self.as_of

    @property
    def prev_start(self) -> dt.date:
        return self.start - dt.timedelta(days=self.period_days)

    @property
    def prev_end(self) -> dt.date:
        return self.start - dt.timedelta(days=1)

    def period_label(self) -> str:
        return f"{self.start:%Y-%m-%d} to {self.end:%Y-%m-%d} ({self.period_days} days)"

    def previous_label(self) -> str:
        return f"{self.prev_start:%Y-%m-%d} to {self.prev_end:%Y-%m-%d}"

    def scope_label(self) -> str:
        tenant = self.tenant_name or self.tenant
        return " / ".join(value for value in (tenant, self.project) if value) or "all tenants"

    def retention_label(self) -> str:
        return "retention-filtered" if self.retained else "everything stored"


def _default_as_of(status: data.WarehouseStatus) -> dt.date:
    return status.as_of or dt.datetime.now(dt.UTC).date()


def render_sidebar(status: data.WarehouseStatus) -> Filters:
    """Draw the filters in the sidebar and remember them for the page; defaults when the warehouse isn't ready."""
    default = Filters(as_of=_default_as_of(status))
    if not status.ready:
        st.session_state[_STATE_KEY] = default
        return default

    sidebar = st.sidebar
    sidebar.header("Filters")
    latest = _default_as_of(status)
    earliest = min(status.first_date or latest, latest)
    as_of = sidebar.date_input(
        "As of (UTC day)",
        value=latest,
        min_value=earliest,
        max_value=latest,
        key="as_of",
        bind="query-params",
        help=f"The marts were built as of {latest}. An earlier day slices the daily series back in time; "
        "skill rankings, trends and the eval matrix stay as of the build.",
    )
    period = sidebar.segmented_control(
        "Period",
        periods(status),
        default=default_period(status),
        format_func=lambda days: f"{days} days",
        required=True,
        key="period",
        bind="query-params",
        help="The N days ending on the as-of day; changes are against the N days before.",
    )
    try:
        tenant_names = scope.tenants()  # tenant key -> display name
    except data.WarehouseUnavailable:
        tenant_names = {}
    # a reader of some tenants chooses among them: the rollups over every tenant are not theirs
    everything = data.current_scope().is_all
    tenant_options = [ALL, *tenant_names] if everything else list(tenant_names)
    if not tenant_options:
        sidebar.info("Your access covers no tenant in these marts.")
        tenant_options = [ALL]
    if st.session_state.get("tenant") not in tenant_options:  # a crafted ?tenant= too
        st.session_state["tenant"] = tenant_options[0]
    tenant = sidebar.selectbox(
        "Tenant",
        tenant_options,
        format_func=lambda key: text.visible(tenant_names.get(key, key)),  # a name from upstream: inert text
        key="tenant",
        bind="query-params",
        help="Applies where a source has a tenant: turn reactions, conversations, evals and workspace feedback. "
        "Session feedback and skill analyzer events have none: they read “not split by tenant” while one is "
        "chosen. A tenant's reactions and its workspace feedback are one choice.",
    )
    chosen_tenant = tenant if tenant in tenant_names else None
    try:
        project_options = [ALL, *scope.projects(chosen_tenant)]
    except data.WarehouseUnavailable:
        project_options = [ALL]
    if st.session_state.get("project") not in project_options:
        st.session_state["project"] = ALL
    project = sidebar.selectbox(
        "Project",
        project_options,
        format_func=text.visible,  # a name from upstream: control and direction characters shown, not obeyed
        key="project",
        bind="query-params",
        help="Turn reactions and conversations carry a project; other sources do not, and read “not split by "
        "project” while one is chosen.",
    )
    retained = sidebar.toggle(
        "Retention-filtered data",
        value=True,
        key="retained",
        bind="query-params",
        help="On: only what the retention policies keep (nothing the next purge removes). "
        "Off: everything stored, including rows past their retention window.",
    )
    filters = Filters(
        as_of=as_of if isinstance(as_of, dt.date) else latest,
        period_days=int(period or default_period(status)),
        tenant=chosen_tenant,
        tenant_name=tenant_names.get(chosen_tenant) if chosen_tenant else None,
        project=None if project in (None, ALL) else project,
        retained=bool(retained),
    )
    st.session_state[_STATE_KEY] = filters
    return filters


def current() -> Filters:
    """The filters the sidebar drew in this run (defaults when a page runs on its own)."""
    filters = st.session_state.get(_STATE_KEY)
    if isinstance(filters, Filters):
        return filters
    return Filters(as_of=dt.datetime.now(dt.UTC).date())
