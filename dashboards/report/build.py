"""Building the report: the tenant it covers, its day and period, its sections in order, the page around them."""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Callable
from dataclasses import dataclass

import plotly.offline

from dashboards import data
from dashboards.filters import DEFAULT_PERIOD, Filters
from dashboards.queries import scope
from dashboards.report import alerts, evals, rates, skills, sources, summary
from dashboards.report.context import Context
from dashboards.report.markup import STYLE, Builder, escape
from warehouse.access import EVERYTHING, Scope
from warehouse.errors import UserError
from warehouse.location import Warehouse

SECTIONS: tuple[Callable[[Builder, Context], None], ...] = (
    summary.summary,
    alerts.section,
    rates.headlines,
    rates.trends,
    rates.session_modality,
    skills.dimension_changes,
    skills.skill_trends,
    skills.hotspots,
    evals.matrix,
    evals.baseline,
    evals.regressions,
    sources.sources,
    sources.retention_status,
)


@dataclass(frozen=True)
class Report:
    html: str
    as_of: dt.date
    built_as_of: dt.date
    charts: int


def _resolve_tenant(tenant: str | None, reader: Scope) -> tuple[str | None, str | None]:
    """--tenant as a key or a display name (any case): (key, name); unknown ones get the list of valid ones.
    A reader of some tenants only must name one, unless it has just one."""
    known = scope.tenants()  # the tenants `reader` may read
    if tenant is None:
        if reader.is_all:
            return None, None
        if len(known) == 1:
            return next(iter(known.items()))
        raise UserError(
            f"the report covers one tenant of your access: choose it with --tenant ({', '.join(known.values())})",
            exit_code=2,
        )
    for key, name in known.items():
        if tenant.casefold() in (key.casefold(), name.casefold()):
            return key, name
    raise UserError(f"no tenant {tenant!r} in the marts; the tenants are: {', '.join(known.values())}", exit_code=2)


def build_report(
    warehouse: Warehouse,
    *,
    as_of: dt.date | None,
    period_days: int = DEFAULT_PERIOD,
    tenant: str | None,
    scope: Scope = EVERYTHING,
) -> Report:
    """The report of `warehouse` (its serving file; the command line resolved it), as HTML text, of what `scope`
    may read (narrowed to `tenant` when given)."""
    with data.use_warehouse(warehouse):
        with data.use_scope(scope):
            status = data.status()
            key, name = _resolve_tenant(tenant, scope) if status.ready else (None, None)
        with data.use_scope(scope.narrowed(key)):
            return _build(status, as_of, period_days, key, name, scope)


def _build(
    status: data.WarehouseStatus,
    as_of: dt.date | None,
    period_days: int,
    key: str | None,
    name: str | None,
    reader: Scope,
) -> Report:
    if not status.ready:
        raise UserError(status.message.replace("`", "").replace("**", ""))
    if period_days not in status.periods:
        held = ", ".join(map(str, status.periods)) or "none"
        raise UserError(f"--period {period_days}: the marts hold periods of {held} days", 2)
    built_as_of = status.as_of
    day = as_of or built_as_of
    if day > built_as_of or (status.first_date and day < status.first_date):
        raise UserError(
            f"--as-of {day}: the marts hold the days {status.first_date} to {built_as_of}; "
            "build as of a later day first (feedback-analytics build --as-of DATE)",
            exit_code=2,
        )
    f = Filters(as_of=day, period_days=period_days, tenant=key, tenant_name=name)
    ctx = Context(f=f, built_as_of=built_as_of, reader=reader)
    report = Builder()
    for section in SECTIONS:
        section(report, ctx)
    generated = dt.datetime.now(dt.UTC)
    title = f"Feedback report, {f.period_label()}"
    page = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style>"
        f"<script>{plotly.offline.get_plotlyjs()}</script></head><body>"
        f"<h1>{html.escape(title)}</h1>"
        f"<p class='meta'>Data as of {day} (UTC) · {escape(f.scope_label())} · {f.retention_label()} · "
        f"marts built as of {built_as_of} at {status.built_at or 'unknown'} UTC · generated "
        f"{generated:%Y-%m-%d %H:%M} UTC</p>"
        + (f"<p class='stale'>{escape(status.unpublished.replace('`', ''))}</p>" if status.unpublished else "")
        + report.html()
        + "</body></html>"
    )
    return Report(page, day, built_as_of, report.charts)
