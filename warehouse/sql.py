"""Quoting for SQL built as text: a string literal and an identifier."""

from __future__ import annotations


def sql_literal(value: str) -> str:
    """A SQL string literal: 'it''s'."""
    return "'" + value.replace("'", "''") + "'"


def quote(name: str) -> str:
    """A quoted SQL identifier: a"b becomes "a""b"."""
    return '"' + name.replace('"', '""') + '"'
