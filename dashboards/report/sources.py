"""The report's sections on the data itself: when each source last delivered (and which stopped), and what each
retention policy keeps."""

from __future__ import annotations

import pandas as pd

from dashboards import words
from dashboards.queries import attention, retention
from dashboards.report import context
from dashboards.report.context import Context
from dashboards.report.markup import Builder, sentence, table

AGE = "Days before the report's day"


def stopped_rule(found: pd.DataFrame) -> str:
    """The rule in words, with the number of days the build used (var source_stopped_after_days)."""
    days = found["stopped_after_days"].dropna()
    limit = f"{int(days.iloc[0])} days" if not days.empty else "the configured number of days"
    return f"A source has stopped arriving when its last signal is more than {limit} before the report's day."


def days_ago(days: object) -> str:
    if pd.isna(days):
        return words.MISSING
    days = int(days)
    return "the same day" if days == 0 else ("1 day" if days == 1 else f"{words.count(days)} days")


def freshness(ctx: Context) -> list[dict[str, object]]:
    """One entry per source: its name, and either its last signal (date, days before, stopped) or the words
    saying why it has no number here (not split by tenant / not available)."""
    f = ctx.f
    found = attention.source_freshness(f.as_of, f.tenant).set_index("source_system")
    left_out = ctx.left_out()
    entries: list[dict[str, object]] = []
    for source, name in words.SOURCES.items():
        if left_out and source in attention.TENANTLESS_SOURCES:
            entries.append({"source": source, "name": name, "reading": left_out})
        elif source not in found.index:
            # none stored on or before the day: none ever arrived, or a retention purge removed them all (a
            # source that stopped longer ago than its retention window): say both, claim neither
            reading = "no signal stored (none arrived, or the retention purge removed them)"
            entries.append({"source": source, "name": name, "reading": reading, "stopped": False})
        else:
            row = found.loc[source]
            entries.append(
                {
                    "source": source,
                    "name": name,
                    "last": row["last_signal_date"],
                    "days": row["days_since_last_signal"],
                    "stopped": bool(row["has_stopped"]),
                }
            )
    return entries


def sources(report: Builder, ctx: Context) -> None:
    f = ctx.f
    report.heading(
        f"Sources, last signal on or before {f.as_of}",
        f"{stopped_rule(attention.source_freshness(f.as_of, f.tenant))} {sentence(f.scope_label())}.",
        anchor=context.SOURCES,
    )
    rows = []
    for entry in freshness(ctx):
        if "last" not in entry:
            rows.append({"Source": entry["name"], "Last signal (UTC day)": entry["reading"], AGE: "", "Status": ""})
            continue
        rows.append(
            {
                "Source": entry["name"],
                "Last signal (UTC day)": f"{entry['last']:%Y-%m-%d}",
                AGE: days_ago(entry["days"]),
                "Status": "stopped arriving" if entry["stopped"] else "arriving",
            }
        )
    report.raw(table(rows, numbers=(AGE,)))


def retention_status(report: Builder, ctx: Context) -> None:
    heading = "Retention status, as of the last build"
    if ctx.closed(report, heading, context.RETENTION):
        return
    windows, log = retention.retention_windows(), retention.purge_log()
    applied = log[~log["is_dry_run"].fillna(False).astype(bool)]
    last = "no purge yet" if applied.empty else f"last purge applied {applied['applied_at'].iloc[0]:%Y-%m-%d %H:%M} UTC"
    report.heading(heading, f"What each policy keeps, {ctx.built}; {last}. Counts over every tenant.",
                   anchor=context.RETENTION)  # fmt: skip
    report.raw(
        table(
            [
                {
                    "Policy": str(row.policy).replace("_", " "),
                    "Stored in": row.raw_table,
                    "Keep (days)": "forever" if pd.isna(row.keep_days) else words.count(row.keep_days),
                    "Keeps rows from (UTC)": "all" if pd.isna(row.cutoff_at) else f"{row.cutoff_at:%Y-%m-%d}",
                    "Rows kept": words.count(row.rows_kept),
                    "Rows the next purge removes": words.count(row.rows_outside_window),
                }
                for row in windows.itertuples()
            ],
            numbers=("Keep (days)", "Rows kept", "Rows the next purge removes"),
        )
    )
