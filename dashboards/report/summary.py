"""The report's first section, "Needs attention": what a product lead forwards as is.

It lists, each with its number, its 95% interval and a link to the section that holds the details:
- the skill x dimension pairs that got significantly worse (Benjamini-Hochberg, skill_dimension_changes);
- the headline rates that got significantly worse in the period;
- the candidates worse than the pinned baseline (by golden session name) and the cells that regressed;
- the sources that stopped arriving (source_freshness_daily, its rule: sources.stopped_rule);
then the headline rates with their change and significance. "Nothing needs attention" when nothing is listed.
Sections that a --tenant report cannot split say so in place of their numbers.
"""

from __future__ import annotations

import pandas as pd

from dashboards import data, words
from dashboards.queries import evals as eval_queries
from dashboards.queries import overview
from dashboards.queries import skills as skill_queries
from dashboards.report import alerts, context, rates, skills, sources
from dashboards.report import evals as eval_sections
from dashboards.report.context import Context
from dashboards.report.markup import Builder, escape, link, sentence

ANCHOR = "needs-attention"


def _item(anchor: str, label: str, detail: str) -> str:
    return f"<li>{link(anchor, label)}: {escape(detail)}</li>"


def _group(title: str, items: list[str]) -> str:
    return f"<h3>{escape(title)}</h3><ul>{''.join(items)}</ul>" if items else ""


def _worsenings(ctx: Context) -> tuple[str, list[str]]:
    """(the group's title, its items) of the skill x dimension pairs that got significantly worse."""
    if ctx.left_out():
        return "", []
    changes = skill_queries.skill_dimension_changes()
    in_words, _ = skills.change_windows(changes)
    items = [
        _item(
            context.DIMENSION_CHANGES,
            f"{row.skill_id}, {row.dimension}",
            f"{words.points(row.rate_change)} "
            f"(95% CI {words.points_interval(row.rate_change_ci_low, row.rate_change_ci_high)}), "
            f"{words.percent(row.prior_rate)} of invocations before, {words.percent(row.recent_rate)} now "
            f"(n = {words.count(row.prior_invocations)} before, {words.count(row.recent_invocations)} now; "
            f"q {_q(row.q_value)})",
        )
        for row in skills.significant_worsenings(changes).itertuples()
    ]
    return f"Got significantly worse: skill and dimension, {in_words}", items


def _q(value: object) -> str:
    shown = words.probability(value)
    return shown if shown.startswith("<") else f"= {shown}"


def _headlines_worse(ctx: Context, headline_rates: pd.DataFrame) -> list[str]:
    items = []
    for metric, label, lower_is_better, _ in overview.HEADLINES:
        if metric not in headline_rates.index or (ctx.left_out() and metric in overview.TENANTLESS_HEADLINES):
            continue
        row = headline_rates.loc[metric]
        if rates.significance(row, lower_is_better) == "significantly worse":
            items.append(_item(context.HEADLINES, label, _headline_detail(ctx, row)))
    return items


def _headline_detail(ctx: Context, row: pd.Series) -> str:
    return (
        f"{words.percent(row['rate'])} (95% CI {words.rate_interval(row['rate_ci_low'], row['rate_ci_high'])}, "
        f"n = {words.count(row['trials'])}), {words.points(row['rate_change'])} against the {ctx.f.period_days} "
        f"days before (95% CI {words.points_interval(row['rate_change_ci_low'], row['rate_change_ci_high'])})"
    )


def _baseline(ctx: Context) -> list[str]:
    worse = eval_sections.worse_cells_by_candidate(ctx.f.tenant)
    items = []
    for row in eval_sections.worse_than_baseline(ctx).itertuples():
        cells = worse.get((str(row.golden_set), str(row.agent_config_label)), [])
        failing = f"fails {', '.join(f'“{cell}”' for cell in cells)} where the baseline passes; " if cells else ""
        items.append(
            _item(
                context.BASELINE,
                f"{row.agent_config_label} on {row.golden_set}" + (f" ({row.tenant_name})" if row.tenant_name else ""),
                f"{failing}pass rate {words.percent(row.pass_rate)} vs the baseline's "
                f"{words.percent(row.baseline_pass_rate)}, {words.points(row.pass_rate_difference)} (95% CI "
                f"{words.points_interval(row.pass_rate_difference_ci_low, row.pass_rate_difference_ci_high)}, "
                f"{'significant' if row.is_significant_difference else 'not significant'}; "
                f"{words.count(row.compared_cells)} golden sessions compared)",
            )
        )
    return items


def _regressions(ctx: Context) -> list[str]:
    found = eval_queries.eval_regressions(ctx.f.tenant)
    return [
        _item(
            context.REGRESSIONS,
            f"“{eval_sections.session_name(row.golden_session_label, row.golden_session_id)}” with "
            f"{row.agent_config_label or row.agent_id} on {row.golden_set}",
            f"accuracy {words.percent(row.overall_accuracy)}, {words.percent(row.previous_overall_accuracy)} the "
            f"replay before (failed: {eval_sections.names(row.failed_dimension_names) or 'the pass threshold'}; "
            f"replayed {row.replayed_at:%Y-%m-%d})",
        )
        for row in found.itertuples()
    ]


def _stopped(ctx: Context) -> list[str]:
    return [
        _item(
            context.SOURCES,
            str(entry["name"]),
            f"last signal {entry['last']:%Y-%m-%d}, {sources.days_ago(entry['days'])} before {ctx.f.as_of}",
        )
        for entry in sources.freshness(ctx)
        if entry.get("stopped")
    ]


def _headline_lines(ctx: Context, headline_rates: pd.DataFrame) -> list[str]:
    items = []
    for metric, label, lower_is_better, _ in overview.HEADLINES:
        if ctx.left_out() and metric in overview.TENANTLESS_HEADLINES:
            items.append(f"<li>{link(context.HEADLINES, label)}: {escape(ctx.left_out() or '')}</li>")
        elif metric in headline_rates.index and not pd.isna(headline_rates.loc[metric, "rate"]):
            row = headline_rates.loc[metric]
            detail = f"{_headline_detail(ctx, row)}, {rates.significance(row, lower_is_better)}"
            items.append(_item(context.HEADLINES, label, detail))
    return items


def summary(report: Builder, ctx: Context) -> None:
    f = ctx.f
    headline_rates = rates.headline_rates(ctx)
    title, worsenings = _worsenings(ctx)
    firing = alerts.firing_items(ctx)
    groups = [
        _group(alerts.TITLE, firing),
        _group(title, worsenings),
        _group("Headline rates that got significantly worse", _headlines_worse(ctx, headline_rates)),
        _group("Worse than the pinned baseline", _baseline(ctx)),
        _group("Eval cells that regressed (failed where the replay before passed)", _regressions(ctx)),
        _group("Sources that stopped arriving", _stopped(ctx)),
    ]
    listed = "".join(groups)
    report.heading(
        f"Needs attention, {f.period_label()}",
        f"{sentence(f.scope_label())} · {f.retention_label()}. The alerts firing, what got significantly worse, "
        "what is worse than the pinned baseline, and which source stopped arriving; each links to its section.",
        anchor=ANCHOR,
    )
    if listed:
        report.raw(f"<div class='attention'>{listed}</div>")
    else:
        report.raw(
            "<div class='attention calm'><p><strong>Nothing needs attention.</strong> "
            + escape(_nothing(ctx))
            + "</p></div>"
        )
    notes = [f"<p class='note'>{escape(line)}</p>" for line in [alerts.note(ctx, bool(firing))] if line]
    if ctx.left_out():
        notes.append(
            f"<p class='note'>Skills, session feedback and analyzer events: {escape(ctx.left_out() or '')} "
            "(their sources carry no tenant).</p>"
        )
    report.raw(
        "<div>"
        + _group("Headline rates", _headline_lines(ctx, headline_rates))
        + "".join(notes)
        + "<p class='note'><strong>How to read:</strong> a rate is a percentage of its n; a change of a rate is in "
        "percentage points (pp); each interval is 95%. "
        + escape(words.P_VALUE_HELP)
        + " "
        + escape(words.q_value_help(data.status().trend_significance_level))
        + "</p></div>"
    )


def _nothing(ctx: Context) -> str:
    said = ["No skill and dimension got significantly worse"] if not ctx.left_out() else []
    said += [
        "no headline rate got significantly worse",
        "no candidate is worse than the pinned baseline",
        "no eval cell regressed",
        "every source is arriving",
    ]
    line = ", ".join(said) + "."
    return line[0].upper() + line[1:]
