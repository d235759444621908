"""Upstream values shown as text, never as markup: one helper per medium the dashboard and the report draw in.

Every value from the data (skill ids, snippets, tenant and project names, golden-session labels, agent config
names, dimensions, conversation ids) may hold markdown, HTML, a `javascript:` link, a right-to-left override or
a megabyte of text. Streamlit's markdown (st.markdown, st.caption, st.info, metric labels...) renders links,
images and emphasis; Plotly renders `<a href>`, `<b>`, `<br>`, `<span style>` in every title, tick label,
legend name, annotation and hover text, and turns `&lt;` into `<`. So:

- `visible`: control and bidirectional formatting characters as visible code points (`\\u202e`), so they
  cannot reorder or break the text around them; long values cut to `limit` characters with an ellipsis.
- `plotly`: `visible`, then `&`, `<`, `>` as entities: Plotly shows them literally.
- `markdown`: `visible` inside a code span, which CommonMark never interprets (no link, image, emphasis or
  HTML); the fence is longer than any run of backticks in the value, so the value cannot close it. A value of
  letters, digits, spaces, `-` and `/` only stays plain.

Tables (st.dataframe) and selectbox options show text as it is; they get `visible` where a label is built.
The HTML report escapes with html.escape (dashboards/report.py) and draws its charts with dashboards/charts.py.
"""

from __future__ import annotations

import html
import re

from warehouse.printable import printable

LABEL_LIMIT = 120  # characters of a value in a label, a title or a line of text
ELLIPSIS = "…"
_BACKTICKS = re.compile(r"`+")
_PLAIN_PUNCTUATION = {" ", "-", "/"}  # with letters and digits: text markdown leaves as it is (no `.`: www.x.y links)


def visible(value: object, limit: int | None = LABEL_LIMIT) -> str:
    """The value as text whose every character shows as itself; cut to `limit` characters (None: no cut)."""
    text = "" if value is None else str(value)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + ELLIPSIS
    return printable(text)  # the same escapes as the terminal and the logs (warehouse/printable.py)


def plotly(value: object, limit: int | None = LABEL_LIMIT) -> str:
    """The value for any Plotly text (title, tick label, legend name, hover text): shown literally."""
    return html.escape(visible(value, limit), quote=False)


def markdown(value: object, limit: int | None = LABEL_LIMIT) -> str:
    """The value for a Streamlit markdown string (st.markdown, st.caption, st.info, labels): a code span."""
    text = visible(value, limit)
    if all(character.isalnum() or character in _PLAIN_PUNCTUATION for character in text):
        return text  # nothing markdown could read as markup: plain, as the words around it
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    return f"{fence} {text} {fence}"
