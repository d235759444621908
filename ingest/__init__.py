"""Feedback Analytics ingest: read every upstream feedback source into the DuckDB warehouse."""

__version__ = "0.1.0"
