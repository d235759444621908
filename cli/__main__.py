"""`python -m cli` is the `feedback-analytics` console script."""

from cli.main import main

if __name__ == "__main__":
    main()
