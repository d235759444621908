"""`python -m ingest` is the same as the `feedback-analytics` console script."""

from ingest.cli import main

if __name__ == "__main__":
    main()
