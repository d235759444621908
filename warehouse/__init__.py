"""The ground floor: the warehouse file and what every part shares about it.

Finding the file, opening it (for writing, or attached read-only), waiting out
another process's lock, the user-facing error type, SQL quoting, the source
contracts and the raw tables built from them. Every part of the project
(ingest, operations, dashboards, the demo generator, the command line)
imports from here; this package imports nothing of theirs.
"""
