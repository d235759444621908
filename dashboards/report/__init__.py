"""The weekly report: one self-contained HTML file with the dashboard's numbers, for an email.

`feedback-analytics report --out FILE.html [--as-of DATE] [--period DAYS] [--tenant T] [--pdf]` reads the
serving file through the dashboard's own queries (dashboards/queries/: the marts' rows, nothing computed
here) and draws the dashboard's own charts (dashboards/charts.py). Plotly's bundle is inlined once, so the
file opens from disk with no server and no network; `--pdf` prints the same file to PDF with chromium.
The period defaults to the dashboard's (dashboards/filters.py DEFAULT_PERIOD).

It opens with "Needs attention" (summary.py): the skill x dimension pairs that got significantly worse, headline
rates that got significantly worse, candidates worse than the pinned baseline, regressed eval cells, sources that
stopped arriving, each with its number and interval and a link to its section. Then the sections: headline rates
and their weekly trend, session feedback by modality (rates.py); skill and dimension changes, skills that got
worse, hotspots (skills.py); the eval matrix, the baseline comparison, regressions (evals.py); sources and
retention (sources.py). A section over a fixed window of the build says so in its title, in words.

The report reads as a tenant scope sees the marts (warehouse/scoped.py; the command line's is every tenant).
`--tenant T` narrows it to that tenant: only its rows, and the sections and headline rates of sources without a
tenant (session feedback, analyzer events, retention counts) read "not split by tenant" in place of numbers
over every tenant ("not available" for a reader whose access lacks every tenant).

Modules: build.py (the page), markup.py (HTML and print layout), context.py, summary.py, rates.py, skills.py,
evals.py, sources.py, pdf.py (the file and its PDF).
"""

from dashboards.report.build import Report, build_report
from dashboards.report.pdf import CHROMIUM, print_pdf, write

__all__ = ["CHROMIUM", "Report", "build_report", "print_pdf", "write"]
