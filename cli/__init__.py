"""The `feedback-analytics` command line: the top floor.

It parses arguments, resolves the warehouse file once (`--db`, options.py)
and dispatches to the parts below it: `ingest/` (loading sources),
`operations/` (build, purge, forget, nightly), `dashboards/` (the Streamlit
app) and `demo/` (the demo data set). None of them imports it.
"""
