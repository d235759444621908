"""The weekly report: one self-contained HTML file with the dashboard's numbers, for an email.

`feedback-analytics report --out FILE.html [--as-of DATE] [--period DAYS] [--tenant T] [--pdf]` reads the
serving file through the dashboard's own queries (dashboards/queries/: the marts' rows, nothing computed
here) and draws the dashboard's own charts (dashboards/charts.py). Plotly's bundle is inlined once, so the
file opens from disk with no server and no network; `--pdf` prints the same file to PDF with chromium.

Sections: the headline rates of the period with their 95% intervals and the change's significance; their
weekly trend (7-day periods); session feedback by modality (text or voice); the skills whose correction rate
got significantly worse (Benjamini-Hochberg q-value); the skill x dimension hotspots; the eval matrix, each
candidate against the pinned baseline and the regressions; the retention status. The rates follow `--as-of`
(any day the marts hold); the skill, eval and retention marts exist only as of the build, and their sections
say so.

The report reads as a tenant scope sees the marts (warehouse/scoped.py; the command line's is every tenant).
`--tenant T` narrows it to that tenant: only its rows, and the sections of sources without a tenant (session
feedback, skills, hotspots, retention counts) and the headline rates of those sources say they are not
available in place of numbers over every tenant.
"""

from __future__ import annotations

import datetime as dt
import html
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import plotly.offline

from dashboards import charts, data, text
from dashboards.filters import Filters
from dashboards.queries import evals, overview, retention, scope, session_feedback, skills
from dashboards.queries.period_rates import weekly_rates
from warehouse.access import EVERYTHING, Scope
from warehouse.errors import UserError
from warehouse.private_files import install, staging_folder, temporary_beside

PERIODS = (1, 7, 30, 90)  # the periods metric_rates_by_period holds
TREND_WEEKS = 12
HOTSPOT_SKILLS = 15
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}
STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #1f2933; padding: 0 1rem; }
h1 { margin-bottom: .2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #d9dde3; padding-bottom: .3rem; }
.meta, .note { color: #5f6b7a; font-size: .9rem; }
.stale { color: #8a4b00; font-weight: 600; border-left: 4px solid #d97706; padding-left: .5rem; }
table { border-collapse: collapse; margin: .6rem 0 1rem; font-size: .9rem; }
th, td { border-bottom: 1px solid #e4e7eb; padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #f5f7fa; } td.number { text-align: right; font-variant-numeric: tabular-nums; }
.chart { page-break-inside: avoid; break-inside: avoid; }
@media print { body { margin: 0; max-width: none; } h2 { page-break-after: avoid; } }
"""


@dataclass(frozen=True)
class Report:
    html: str
    as_of: dt.date
    built_as_of: dt.date
    charts: int


def _percent(value: object) -> str:
    return "n/a" if value is None or pd.isna(value) else f"{value:.1%}"


def _missing(*values: object) -> bool:
    return any(value is None or pd.isna(value) for value in values)


def _rate_interval(low: object, high: object) -> str:
    return "n/a" if _missing(low, high) else f"{low:.1%} to {high:.1%}"


def _change_interval(low: object, high: object) -> str:
    """A change's interval in percentage points, from the marts' fractions."""
    return "n/a" if _missing(low, high) else f"{low * 100:+.1f} to {high * 100:+.1f} pp"


def _probability(value: object) -> str:
    """A p- or q-value: two significant digits, and below 0.0001 only that (a double underflows to 0)."""
    return "n/a" if _missing(value) else ("< 0.0001" if value < 1e-4 else f"{value:.2g}")


def _names(value: object) -> str:
    """A list column (failed dimensions) as text."""
    if value is None or isinstance(value, str):
        return value or ""
    return ", ".join(str(item) for item in list(value))


def _escape(value: str) -> str:
    """Text for the page: control and bidi characters made visible (dashboards/text.py), then HTML-escaped."""
    return html.escape(text.visible(value, limit=None))


def _table(rows: list[dict[str, str]], numbers: tuple[str, ...] = ()) -> str:
    """An HTML table of already formatted text (escaped here); `numbers` are right-aligned columns."""
    if not rows:
        return ""
    head = "".join(f"<th>{_escape(name)}</th>" for name in rows[0])
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="number">{_escape(value)}</td>' if name in numbers else f"<td>{_escape(value)}</td>"
            for name, value in row.items()
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class _Builder:
    """The report's parts in order; every chart carries the as-of of its data as its subtitle."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.charts = 0

    def heading(self, heading: str, note: str) -> None:
        self.parts.append(f"<h2>{_escape(heading)}</h2><p class='note'>{_escape(note)}</p>")

    def text(self, line: str) -> None:
        self.parts.append(f"<p>{_escape(line)}</p>")

    def raw(self, markup: str) -> None:
        self.parts.append(markup)

    def chart(self, figure: go.Figure, as_of_note: str) -> None:
        figure.update_layout(title_subtitle_text=as_of_note, margin={"t": 90}, template="plotly_white")
        self.charts += 1
        self.parts.append(
            "<div class='chart'>"
            + figure.to_html(
                full_html=False, include_plotlyjs=False, config=PLOTLY_CONFIG, div_id=f"chart-{self.charts}"
            )
            + "</div>"
        )


def _unavailable(report: _Builder, heading: str, reading: Scope) -> bool:
    """True, after a heading that says so, when `reading` leaves out a source without a tenant."""
    if reading.is_all:
        return False
    tenants = ", ".join(sorted(reading.tenants or ())) or "none"
    report.heading(heading, f"Not available: this source has no tenant, and the report covers only {tenants}.")
    return True


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


def _headlines(report: _Builder, f: Filters) -> None:
    rates = overview.headline_rates(f.as_of, f.period_days, f.retained, f.tenant, f.project).set_index("metric")
    tenantless = () if data.current_scope().is_all else overview.TENANTLESS_HEADLINES
    report.heading(
        "Headline rates",
        f"{f.period_label()} against {f.previous_label()} · {f.scope_label()} · {f.retention_label()}. "
        "Intervals are 95% Wilson intervals; a change is significant when its 95% (Newcombe) interval "
        "excludes zero. Session feedback and analyzer events carry no tenant.",
    )
    rows, shown = [], []
    for metric, label, lower_is_better, definition in overview.HEADLINES:
        if metric in tenantless or metric not in rates.index or pd.isna(rates.loc[metric, "rate"]):
            empty = dict.fromkeys(("95% CI", "Previous period", "Change", "95% CI of change", "Significant"), "")
            shown_as = "not available (no tenant)" if metric in tenantless else "no data"
            rows.append({"Rate": label, "This period": shown_as, **empty, "n": "", "Definition": definition})
            continue
        row = rates.loc[metric]
        change = "n/a" if pd.isna(row["rate_change"]) else f"{row['rate_change'] * 100:+.1f} pp"
        better = (row["rate_change"] < 0) == lower_is_better if not pd.isna(row["rate_change"]) else None
        significant = "yes" if row["is_significant_change"] else "no"
        if row["is_significant_change"] and better is not None:
            significant += " (better)" if better else " (worse)"
        rows.append(
            {
                "Rate": label,
                "This period": _percent(row["rate"]),
                "95% CI": _rate_interval(row["rate_ci_low"], row["rate_ci_high"]),
                "Previous period": _percent(row["previous_rate"]),
                "Change": change,
                "95% CI of change": _change_interval(row["rate_change_ci_low"], row["rate_change_ci_high"]),
                "Significant": significant,
                "n": f"{row['trials']:,.0f}",
                "Definition": definition,
            }
        )
        shown.append({"label": f"{label} (n = {row['trials']:,.0f})", **row[["rate", "rate_ci_low", "rate_ci_high"]]})
    report.raw(_table(rows, numbers=("This period", "Previous period", "Change", "n")))
    if shown:
        frame = pd.DataFrame(shown)
        report.chart(
            charts.rate_bars(
                frame,
                category="label",
                rate="rate",
                low="rate_ci_low",
                high="rate_ci_high",
                title=f"Headline rates, {f.period_label()}",
                rate_title="Rate (95% CI)",
                category_title="Rate",
            ),
            f"Data as of {f.as_of} (UTC), {f.scope_label()}, {f.retention_label()}",
        )


def _trends(report: _Builder, f: Filters) -> None:
    labels = {metric: label for metric, label, *_ in overview.HEADLINES}
    weekly = weekly_rates(f.as_of, TREND_WEEKS, f.retained, f.tenant, f.project, overview.HEADLINE_METRICS)
    report.heading(
        "Weekly trends",
        f"Each point is the 7 days ending on that day, over the last {TREND_WEEKS} weeks; bands are 95% intervals.",
    )
    if weekly.empty:
        report.text("No rate has data in these weeks.")
        return
    weekly = weekly.assign(rate_name=weekly["metric"].map(labels))
    report.chart(
        charts.rate_lines(
            weekly,
            x="as_of_date",
            y="rate",
            low="rate_ci_low",
            high="rate_ci_high",
            color="rate_name",
            title="Headline rates per week",
            y_title="Rate (7 days ending on the day)",
            x_title="Week ending (UTC day)",
            legend_title="Rate",
            hover_count="trials",
        ),
        f"Data as of {f.as_of} (UTC), {f.scope_label()}, {f.retention_label()}",
    )


def _session_modality(report: _Builder, f: Filters) -> None:
    if _unavailable(report, "Session feedback by modality", data.current_scope()):
        return
    rates = session_feedback.session_feedback_rates(f.as_of, f.period_days, f.retained, "modality")
    rates = rates[rates["trials"] > 0]
    report.heading(
        "Session feedback by modality",
        f"{f.period_label()} · {f.retention_label()}. The channel the user rated, text or voice (a record without "
        "one is text, upstream's default); 95% Wilson intervals. Session feedback carries no tenant: all tenants.",
    )
    if rates.empty:
        report.text("No end-of-session answer in this period.")
        return
    by_metric = {metric: rows.set_index("segment_value") for metric, rows in rates.groupby("metric")}
    positive = by_metric.get("session_positive_rate", pd.DataFrame())
    skip = by_metric.get("session_skip_rate", pd.DataFrame())
    rows, shown = [], []
    for modality in sorted(set(positive.index) | set(skip.index)):
        pos = positive.loc[modality] if modality in positive.index else None
        skp = skip.loc[modality] if modality in skip.index else None
        rows.append(
            {
                "Modality": str(modality),
                "Responses": f"{skp['trials']:,.0f}" if skp is not None else "0",
                "Positive rate": _percent(pos["rate"]) if pos is not None else "n/a",
                "95% CI": _rate_interval(pos["rate_ci_low"], pos["rate_ci_high"]) if pos is not None else "n/a",
                "Skip rate": _percent(skp["rate"]) if skp is not None else "n/a",
                "95% CI of skip rate": (
                    _rate_interval(skp["rate_ci_low"], skp["rate_ci_high"]) if skp is not None else "n/a"
                ),
            }
        )
        if pos is not None and not pd.isna(pos["rate"]):
            label = f"{modality} (n = {pos['trials']:,.0f})"
            shown.append({"label": label, **pos[["rate", "rate_ci_low", "rate_ci_high"]]})
    report.raw(_table(rows, numbers=("Responses", "Positive rate", "Skip rate")))
    if shown:
        report.chart(
            charts.rate_bars(
                pd.DataFrame(shown),
                category="label",
                rate="rate",
                low="rate_ci_low",
                high="rate_ci_high",
                title=f"Session positive rate by modality, {f.period_label()}",
                rate_title="Positive rate (% of rated answers, 95% CI)",
                category_title="Modality (rated answers)",
            ),  # fmt: skip
            f"Data as of {f.as_of} (UTC), all tenants, {f.retention_label()}",
        )


def _skills(report: _Builder, built: str) -> None:
    if _unavailable(report, "Skills that got significantly worse", data.current_scope()):
        return
    trends = skills.skill_correction_trends()
    worse = trends[(trends["direction"] == "worsening") & trends["is_significant"].fillna(False).astype(bool)]
    window = int(trends["trend_window_days"].iloc[0]) if not trends.empty else 0
    report.heading(
        "Skills that got significantly worse",
        f"Correction rate of the last {window} days against the {window} days before, two-proportion z-test, "
        "significant after the Benjamini-Hochberg correction over every skill tested (q at most var "
        f"trend_significance_level, 0.05 unless the build set another); {built}. "
        "Analyzer events carry no tenant: all tenants.",
    )
    if worse.empty:
        report.text(f"No skill got significantly worse ({len(trends)} skills tested).")
        return
    report.raw(
        _table(
            [
                {
                    "Skill": row.skill_id,
                    "Recent rate": _percent(row.recent_rate),
                    "Before": _percent(row.prior_rate),
                    "Change": f"{row.trend * 100:+.1f} pp",
                    "95% CI of change": _change_interval(row.trend_ci_low, row.trend_ci_high),
                    "p-value": _probability(row.p_value),
                    "q-value": _probability(row.q_value),
                    "n recent / before": f"{row.recent_sample:,} / {row.prior_sample:,}",
                }
                for row in worse.itertuples()
            ],
            numbers=("Recent rate", "Before", "Change", "p-value", "q-value"),
        )
    )
    bars = worse.assign(label=worse["skill_id"]).rename(columns={"trend_ci_low": "low", "trend_ci_high": "high"})
    figure = charts.rate_bars(bars, category="label", rate="trend", low="low", high="high", horizontal=True,
                              colour=charts.DIRECTION_COLOURS["worsening"], title="Change of the correction rate",
                              rate_title="Change (recent minus before, 95% CI)", category_title="Skill")  # fmt: skip
    figure.update_layout(height=max(260, 150 + 40 * len(bars)))
    report.chart(figure, f"Data {built}")


def _hotspots(report: _Builder, built: str) -> None:
    if _unavailable(report, "Dimension hotspots", data.current_scope()):
        return
    hotspots = skills.skill_dimension_hotspots()
    report.heading(
        "Dimension hotspots",
        f"Corrections and partial corrections per skill and dimension, the {HOTSPOT_SKILLS} skills with the most. "
        f"Data {built}.",
    )
    if hotspots.empty:
        report.text("No correction in the window.")
        return
    top = hotspots.groupby("skill_id")["occurrences"].sum().nlargest(HOTSPOT_SKILLS).index
    pivot = hotspots[hotspots["skill_id"].isin(top)].pivot_table(
        index="skill_id", columns="dimension", values="occurrences", aggfunc="sum"
    )
    pivot = pivot.loc[list(top)]
    figure = charts.count_heatmap(pivot, title="Corrections per skill and dimension", x_title="Dimension",
                                  y_title="Skill", colorbar_title="Events", hover_label="events")  # fmt: skip
    figure.update_layout(height=max(320, 120 + 28 * len(pivot)))
    report.chart(figure, f"Data {built}")


def _evals(report: _Builder, f: Filters, built: str) -> None:
    matrix = evals.eval_matrix(f.tenant)
    report.heading(
        "Eval matrix",
        "Golden sessions x agent configs, the latest finished replay of each cell (pending cells are left out of "
        f"the squares). Data {built}, {f.scope_label()}.",
    )
    shown = matrix[matrix["replayed_at"].notna()]
    if shown.empty:
        report.text("No finished replay.")
    else:
        figure = charts.eval_matrix(shown, title="Eval matrix: latest replay per golden session and agent config")
        report.chart(figure, f"Data {built}")
    _baseline(report, f)
    regressions = evals.eval_regressions(f.tenant)
    report.raw("<h3>Regressions</h3>")
    if regressions.empty:
        report.text("No cell regressed: no latest replay failed where the one before passed.")
        return
    report.raw(
        _table(
            [
                {
                    "Tenant": row.tenant_name or "",
                    "Golden set": row.golden_set,
                    "Golden session": row.golden_session_label or charts.short_id(row.golden_session_id),
                    "Agent config": row.agent_config_label or charts.short_id(row.agent_id),
                    "Replayed at (UTC)": f"{row.replayed_at:%Y-%m-%d %H:%M}",
                    "Accuracy": _percent(row.overall_accuracy),
                    "Before": _percent(row.previous_overall_accuracy),
                    "Failed dimensions": _names(row.failed_dimension_names),
                    "Newer replay pending": "yes" if row.has_pending_replay else "no",
                }
                for row in regressions.itertuples()
            ],
            numbers=("Accuracy", "Before"),
        )
    )


def _baseline(report: _Builder, f: Filters) -> None:
    comparison = evals.eval_baseline_comparison(f.tenant)
    report.raw("<h3>Candidates against the pinned baseline</h3>")
    report.text(
        "Over the golden sessions where both have a finished replay: cells better (the candidate passed where the "
        "baseline failed), worse, the same; the pass-rate difference with its 95% (Newcombe) interval."
    )
    if comparison.empty:
        report.text("No golden set has a baseline with a candidate beside it (seeds/eval_baselines.csv).")
        return
    report.raw(
        _table(
            [
                {
                    "Tenant": row.tenant_name or "",
                    "Golden set": row.golden_set,
                    "Candidate": row.agent_config_label,
                    "Baseline": row.baseline_agent_config_label,
                    "Better / worse / same": f"{row.cells_better} / {row.cells_worse} / {row.cells_same}",
                    "Candidate pass rate": _percent(row.pass_rate),
                    "Baseline pass rate": _percent(row.baseline_pass_rate),
                    "Difference": f"{row.pass_rate_difference * 100:+.1f} pp",
                    "95% CI": _change_interval(row.pass_rate_difference_ci_low, row.pass_rate_difference_ci_high),
                    "Significant": "yes" if row.is_significant_difference else "no",
                }
                for row in comparison.itertuples()
            ],
            numbers=("Candidate pass rate", "Baseline pass rate", "Difference"),
        )
    )


def _retention(report: _Builder, built: str) -> None:
    if _unavailable(report, "Retention status", data.current_scope()):
        return
    windows, log = retention.retention_windows(), retention.purge_log()
    applied = log[~log["is_dry_run"].fillna(False).astype(bool)]
    last = "no purge yet" if applied.empty else f"last purge applied {applied['applied_at'].iloc[0]:%Y-%m-%d %H:%M} UTC"
    report.heading("Retention status", f"What each policy keeps, {built}; {last}.")
    report.raw(
        _table(
            [
                {
                    "Policy": row.policy,
                    "Table": row.raw_table,
                    "Keep (days)": "forever" if pd.isna(row.keep_days) else f"{row.keep_days:.0f}",
                    "Keeps rows from (UTC)": "all" if pd.isna(row.cutoff_at) else f"{row.cutoff_at:%Y-%m-%d}",
                    "Rows kept": f"{row.rows_kept:,.0f}",
                    "Rows the next purge removes": f"{row.rows_outside_window:,.0f}",
                }
                for row in windows.itertuples()
            ],
            numbers=("Keep (days)", "Rows kept", "Rows the next purge removes"),
        )
    )


def build_report(*, as_of: dt.date | None, period_days: int, tenant: str | None, scope: Scope = EVERYTHING) -> Report:
    """The report of the warehouse the process resolved (FEEDBACK_DB), as HTML text, of what `scope` may read
    (narrowed to `tenant` when given)."""
    with data.use_scope(scope):
        status = data.status()
        key, name = _resolve_tenant(tenant, scope) if status.ready else (None, None)
    with data.use_scope(scope.narrowed(key)):
        return _build(status, as_of, period_days, key, name)


def _build(
    status: data.WarehouseStatus, as_of: dt.date | None, period_days: int, key: str | None, name: str | None
) -> Report:
    if not status.ready:
        raise UserError(status.message.replace("`", "").replace("**", ""))
    if period_days not in PERIODS:
        raise UserError(f"--period {period_days}: the marts hold periods of {', '.join(map(str, PERIODS))} days", 2)
    built_as_of = status.as_of
    day = as_of or built_as_of
    if day > built_as_of or (status.first_date and day < status.first_date):
        raise UserError(
            f"--as-of {day}: the marts hold the days {status.first_date} to {built_as_of}; "
            "build as of a later day first (feedback-analytics build --as-of DATE)",
            exit_code=2,
        )
    f = Filters(as_of=day, period_days=period_days, tenant=key, tenant_name=name)
    built = f"as of the last build, {built_as_of} (UTC)"
    report = _Builder()
    sections: list[Callable[[], None]] = [
        lambda: _headlines(report, f),
        lambda: _trends(report, f),
        lambda: _session_modality(report, f),
        lambda: _skills(report, built),
        lambda: _hotspots(report, built),
        lambda: _evals(report, f, built),
        lambda: _retention(report, built),
    ]
    for section in sections:
        section()
    generated = dt.datetime.now(dt.UTC)
    title = f"Feedback report, {f.period_label()}"
    page = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style>"
        f"<script>{plotly.offline.get_plotlyjs()}</script></head><body>"
        f"<h1>{html.escape(title)}</h1>"
        f"<p class='meta'>Data as of {day} (UTC) · {_escape(f.scope_label())} · {f.retention_label()} · "
        f"marts built as of {built_as_of} at {status.built_at or 'unknown'} UTC · generated "
        f"{generated:%Y-%m-%d %H:%M} UTC from {html.escape(status.path)}</p>"
        + (f"<p class='stale'>{_escape(status.unpublished.replace('`', ''))}</p>" if status.unpublished else "")
        + "".join(report.parts)
        + "</body></html>"
    )
    return Report(page, day, built_as_of, report.charts)


def write(path: Path, text: str) -> None:
    """Write the file under a temporary name beside it (unpredictable, created exclusively) and rename it into place."""
    temporary = temporary_beside(path, "writing")
    try:
        temporary.write_text(text, encoding="utf-8")
        install(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def print_pdf(page: Path, pdf: Path, *, timeout: float = 120) -> None:
    """Print the HTML file to PDF with headless chromium (the charts drawn first: scripts run before printing)."""
    if not CHROMIUM.exists():
        raise UserError(f"--pdf needs chromium at {CHROMIUM}: install it (apt-get install chromium) or set CHROMIUM")
    with staging_folder(pdf, f".{pdf.name}.printing-") as partial:  # unpredictable, created exclusively
        _print_to(page, partial, pdf, timeout)


def _print_to(page: Path, partial: Path, pdf: Path, timeout: float) -> None:
    command = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-pdf-header-footer",
        "--run-all-compositor-stages-before-draw",
        "--virtual-time-budget=20000",
        f"--print-to-pdf={partial}",
        page.resolve().as_uri(),
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False
        )
    except (subprocess.TimeoutExpired, OSError) as exc:
        partial.unlink(missing_ok=True)
        raise UserError(f"chromium could not print {page} to PDF: {exc}") from None
    if done.returncode != 0 or not partial.exists() or partial.stat().st_size == 0:
        partial.unlink(missing_ok=True)
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise UserError(
            f"chromium could not print {page} to PDF: {detail[-1] if detail else f'exit {done.returncode}'}"
        )
    install(partial, pdf)
