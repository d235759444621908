"""Feedback Analytics ingest: read every upstream feedback source into the DuckDB warehouse."""
