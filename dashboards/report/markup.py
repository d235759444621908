"""The report's HTML: escaped text, tables, charts, and the print layout that keeps a heading with what follows it.

Every value drawn is text (dashboards/text.py: control and bidi characters made visible, then HTML-escaped).
The print rules: no Plotly mode bar; a heading and its note travel with the first block after them (one
unbreakable container); a chart with its legend and a small table never split across pages; a long table
repeats its header on each page.
"""

from __future__ import annotations

import html

import plotly.graph_objects as go

from dashboards import text

PLOTLY_CONFIG = {"displaylogo": False, "displayModeBar": False, "responsive": True, "staticPlot": False}
PAGE_HEIGHT = 900  # px: a chart at most this tall fits on one printed page with its title and legend
SMALL_TABLE_ROWS = 18  # a table of at most this many rows is kept on one page
STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans CJK SC", sans-serif, "Noto Color Emoji";
       margin: 2rem auto; max-width: 1100px;
       color: #1f2933; padding: 0 1rem; }
h1 { margin-bottom: .2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #d9dde3; padding-bottom: .3rem; }
h2, h3 { break-after: avoid; page-break-after: avoid; }
.meta, .note { color: #5f6b7a; font-size: .9rem; }
.stale { color: #8a4b00; font-weight: 600; border-left: 4px solid #d97706; padding-left: .5rem; }
.note { break-inside: avoid; page-break-inside: avoid; }
h2 + .note, h3 + .note { break-before: avoid; page-break-before: avoid; break-after: avoid; page-break-after: avoid; }
table { border-collapse: collapse; margin: .6rem 0 1rem; font-size: .9rem; }
thead { display: table-header-group; } tr { break-inside: avoid; page-break-inside: avoid; }
th, td { border-bottom: 1px solid #e4e7eb; padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #f5f7fa; } td.number { text-align: right; font-variant-numeric: tabular-nums; }
.chart, .keep, table.small { break-inside: avoid; page-break-inside: avoid; }
.modebar-container, .modebar { display: none !important; }
.attention { border: 1px solid #d9dde3; border-left: 4px solid #c0392b; padding: .4rem 1rem; margin: 1rem 0;
             break-inside: avoid; page-break-inside: avoid; }
.attention.calm { border-left-color: #2e7d32; }
.attention li { margin: .3rem 0; } .attention h3 { margin: .6rem 0 .2rem; font-size: 1rem; }
a { color: #1f5fa8; }
@media print { body { margin: 0; max-width: none; } a { text-decoration: none; } }
"""


def sentence(value: str) -> str:
    """`value` with a capital first letter (the rest as it is: a tenant's name keeps its case)."""
    return value[:1].upper() + value[1:]


def escape(value: object) -> str:
    """Text for the page: control and bidi characters made visible (dashboards/text.py), then HTML-escaped."""
    return html.escape(text.visible(str(value), limit=None))


def link(anchor: str, label: str) -> str:
    """A link to a section of the report (`anchor` is ours, never upstream's)."""
    return f"<a href='#{anchor}'>{escape(label)}</a>"


def table(rows: list[dict[str, str]], numbers: tuple[str, ...] = ()) -> str:
    """An HTML table of already formatted text (escaped here); `numbers` are right-aligned columns. A small
    table stays on one page."""
    if not rows:
        return ""
    head = "".join(f"<th>{escape(name)}</th>" for name in rows[0])
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="number">{escape(value)}</td>' if name in numbers else f"<td>{escape(value)}</td>"
            for name, value in row.items()
        )
        + "</tr>"
        for row in rows
    )
    size = " class='small'" if len(rows) <= SMALL_TABLE_ROWS else ""
    return f"<table{size}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class Builder:
    """The report's parts in order. A heading (with its note) is held until the next block arrives, and the two
    are written as one container that a page break does not split; every chart carries its data's as-of."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.charts = 0
        self._held = ""

    def heading(self, heading: str, note: str = "", *, anchor: str | None = None, level: int = 2) -> None:
        self._flush()
        target = f" id='{anchor}'" if anchor else ""
        self._held = f"<h{level}{target}>{escape(heading)}</h{level}>" + (
            f"<p class='note'>{escape(note)}</p>" if note else ""
        )

    def text(self, line: str) -> None:
        self.raw(f"<p>{escape(line)}</p>")

    def raw(self, markup: str) -> None:
        """A block of markup (already escaped), kept with a held heading when there is one."""
        if self._held and "<table>" in markup:  # a long table: no break after its heading (break-after: avoid)
            self.parts.append(self._held + markup)
        elif self._held:
            self.parts.append(f"<div class='keep'>{self._held}{markup}</div>")
        else:
            self.parts.append(markup)
        self._held = ""

    def chart(self, figure: go.Figure, as_of_note: str) -> None:
        figure.update_layout(title_subtitle_text=as_of_note, margin={"t": 90}, template="plotly_white")
        if (figure.layout.height or 0) > PAGE_HEIGHT:  # taller than a page: its legend would land on the next one
            figure.update_layout(height=PAGE_HEIGHT)
        self.charts += 1
        self.raw(
            "<div class='chart'>"
            + figure.to_html(
                full_html=False, include_plotlyjs=False, config=PLOTLY_CONFIG, div_id=f"chart-{self.charts}"
            )
            + "</div>"
        )

    def html(self) -> str:
        self._flush()
        return "".join(self.parts)

    def _flush(self) -> None:
        if self._held:
            self.parts.append(self._held)
            self._held = ""
