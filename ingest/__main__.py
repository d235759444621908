"""`python -m ingest ...` runs the `feedback-analytics` command line (cli/), as it did when the command line
lived in this package. An entry point, not a module: nothing in ingest/ imports the command line, and this
file only asks Python to run it (`python -m ingest` is then both the program name and the usage line)."""

import runpy

if __name__ == "__main__":
    runpy.run_module("cli", run_name="__main__")
