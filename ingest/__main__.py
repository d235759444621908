"""`python -m ingest ...` runs the `feedback-analytics` command line (cli/), as it did when the command
line lived in this package: an entry point, not a module; nothing in ingest/ imports the command line."""

import runpy

runpy.run_module("cli", run_name="__main__", alter_sys=True)
