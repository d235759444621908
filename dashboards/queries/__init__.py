"""The dashboard's queries, one module per page (plus `scope`, the filters every page shares).

Each function selects, filters and sums dbt marts through the connection core in
dashboards/data.py and returns a DataFrame cached by its arguments (the sidebar's
filter values). No module computes a rate or an interval: those are columns of the
marts (metric_rates_by_period and friends; docs/metrics.md says which page reads which).
"""
