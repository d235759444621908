"""What every page shares: its header (title, data as of, last build, filters in force), the
not-ready message, and sections that degrade to a warning when their mart is missing."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pandas as pd
import streamlit as st

from dashboards import data, filters, text, words
from warehouse.export_format import CSV_TIMESTAMP, neutralise

COMMANDS = """```sh
make demo                                  # demo data, ingest, build, dashboard
# or, on your own data:
feedback-analytics ingest --config sources.toml
feedback-analytics build
```"""


def _when(moment: dt.datetime | None) -> str:
    return "never" if moment is None else f"{moment:%Y-%m-%d %H:%M} UTC"


def freshness(status: data.WarehouseStatus) -> str:
    """As-of day, build and ingest times; which file they come from is the Warehouse page's to say."""
    as_of = status.as_of.isoformat() if status.as_of else "unknown"
    built = _when(status.built_at)
    return f"Data as of **{as_of}** (UTC) · marts built {built} · last ingest {_when(status.last_loaded_at)}"


def page(title: str) -> tuple[data.WarehouseStatus, filters.Filters]:
    """Title, freshness line and the filters in force; stops the page
    with instructions when nothing can be shown."""
    st.title(title)
    try:
        status = data.status()
    except data.WarehouseUnavailable as exc:
        st.warning(str(exc))
        st.stop()
    if not status.ready:  # every page reads marts: missing, not loaded or not built stops it here
        st.error(status.message)
        st.markdown(COMMANDS)
        st.stop()
    st.caption(freshness(status))
    if status.unpublished:  # a newer build than the one shown (data.status): say so on every page
        st.warning(status.unpublished)
    return status, filters.current()


def scope(current: filters.Filters, applies: str) -> None:
    """One line saying which filters this page honours (the tenant and project as text: dashboards/text.py)."""
    st.caption(
        f"Period {current.period_label()} vs {current.previous_label()} · {text.markdown(current.scope_label())} · "
        f"{current.retention_label()}. {applies}"
    )


def tenantless(what: str) -> bool:
    """True, after saying so in place of the numbers, when the reader's scope leaves out `what`: a source
    without a tenant (session feedback, analyzer events) or a count over every tenant, which only access to
    every tenant reads (warehouse/scoped.py)."""
    scope = data.current_scope()
    if scope.is_all:
        return False
    tenants = ", ".join(text.markdown(tenant) for tenant in sorted(scope.tenants or ())) or "none"  # keys: upstream
    st.info(
        f"{what}: not available. It has no tenant, and your access covers only the tenants: {tenants}. "
        "Sources without a tenant need access to every tenant."
    )
    return True


def not_split(current: filters.Filters, what: str, *, has_tenant: bool = False) -> bool:
    """True, after saying so in place of the numbers, when a tenant (or project) is selected and `what` comes
    from a source without one (session feedback, analyzer events) or counts over every tenant: its numbers would
    be the all-tenant ones, which the selected scope does not cover. Every card, chart or table of such a
    source calls it (or shows words.not_split(...) as its value) instead of drawing the all-tenant number.
    `has_tenant`: the source has a tenant but no project (evals): only a selected project stops it."""
    reading = words.not_split(None if has_tenant else current.tenant, current.project)
    if reading is None:
        return False
    if has_tenant:
        st.info(
            f"{what}: {reading}. This source has a tenant but no project, so its numbers cover every project; "
            "set the project filter to All to see them."
        )
        return True
    unit = "tenant" if current.tenant else "project"
    st.info(
        f"{what}: {reading}. Its source has no {unit}, so its numbers would cover every {unit}; "
        f"set the {unit} filter to All to see them."
    )
    return True


@contextmanager
def section(name: str) -> Iterator[None]:
    """Run one part of a page; a missing mart or a busy warehouse shows a warning there, not a traceback."""
    try:
        yield
    except data.WarehouseUnavailable as exc:
        st.warning(f"{name} is unavailable: {exc}")


def _rows_end_with_lf(csv: str) -> str:
    """CSV written with CRLF row ends (so that Python's writer quotes every cell holding a CR or an LF) with LF
    row ends, as `export` writes: a CRLF outside quotes ends a row; inside a quoted cell it is the cell's."""
    parts = csv.split('"')  # even parts lie outside quotes (an escaped "" leaves an empty part between)
    parts[::2] = [part.replace("\r\n", "\n") for part in parts[::2]]
    return '"'.join(parts)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """A frame as CSV, as `feedback-analytics export` writes it (warehouse/export_format.py): timestamps UTC
    ISO 8601 with a Z, a text cell a spreadsheet would run as a formula marked as text with a leading `'`,
    every cell holding a CR or an LF quoted; no index; other values as pandas writes them (booleans `True`,
    not `true`)."""
    frame = frame.copy()
    for column in frame.columns:
        values = frame[column]
        if isinstance(values.dtype, pd.DatetimeTZDtype):
            frame[column] = values.dt.tz_convert("UTC").dt.tz_localize(None)
        elif values.dtype == object or isinstance(values.dtype, pd.StringDtype):
            frame[column] = values.map(lambda value: neutralise(value) if isinstance(value, str) else value)
    written = frame.to_csv(index=False, date_format=CSV_TIMESTAMP, lineterminator="\r\n")
    return _rows_end_with_lf(written).encode()


PERCENT = "%.1f%%"  # a rate in a table: one decimal, as on the cards and in the report (80.9%)


def _one_decimal_percents(frame: pd.DataFrame, options: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Streamlit's `percent` format prints as many decimals as a value has (33.33%, 0%, 25%, 85.54%): a column
    configured with it shows its fractions as percentages with one decimal instead (the CSV keeps fractions)."""
    config = dict(options.get("column_config") or {})
    percents = [
        column
        for column, setting in config.items()
        if isinstance(setting, dict) and (setting.get("type_config") or {}).get("format") == "percent"
    ]
    if not percents:
        return frame, options
    frame = frame.copy()
    for column in percents:
        setting = config[column]
        config[column] = {**setting, "type_config": {**setting["type_config"], "format": PERCENT}}
        if column in frame:
            frame[column] = frame[column] * 100
    return frame, {**options, "column_config": config}


def table(frame: pd.DataFrame, name: str, **options: Any) -> Any:
    """st.dataframe, and under it a button that downloads what the table shows (its rows, the columns it
    does not hide) as `<name>.csv`; returns what st.dataframe returns (the selection, when selectable).
    A column configured with format="percent" (fractions) shows one decimal: `_one_decimal_percents`."""
    displayed, display_options = _one_decimal_percents(frame, options)
    shown = st.dataframe(displayed, **display_options)
    hidden = [column for column, config in (options.get("column_config") or {}).items() if config is None]
    st.download_button(
        "Download CSV",
        data=csv_bytes(frame.drop(columns=hidden, errors="ignore")),
        file_name=f"{name}.csv",
        mime="text/csv",
        key=f"download_{name}",
        on_click="ignore",
        icon=":material/download:",
    )
    return shown
