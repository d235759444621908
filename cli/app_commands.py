"""`feedback-analytics demo-data` and `dashboard`: the demo data set, and the Streamlit app on the warehouse."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from cli.options import db_option, parse_cli_as_of, quiet_option, warehouse_file

PROJECT_DIR = Path(__file__).resolve().parents[1]


@click.command("demo-data")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--seed", type=int, default=42, show_default=True, help="Random seed: same seed, same bytes.")
@click.option("--scale", type=float, default=1.0, show_default=True, help="Volume multiplier (100 = ~10M signals).")
@click.option("--as-of", "as_of", default=None, help="Last day of the history (default: today, UTC).")
@click.option(
    "--days",
    type=click.IntRange(1, 200),
    default=200,
    show_default=True,
    help="Write only the last N days of the history, at its daily volume: a night's new data (use another --seed).",
)
@quiet_option
def demo_data(out_dir: Path, seed: int, scale: float, as_of: str | None, days: int, quiet: bool) -> None:
    """Write a realistic, deterministic demo data set in every upstream format, plus OUT_DIR/sources.toml."""
    # imported here, from its module: a `demo/` folder in the working directory (say, demo-data written
    # there) would shadow the package for `python -m cli` and break every other command
    from demo.dataset import generate

    if scale <= 0:
        raise click.BadParameter("must be greater than 0", param_hint="--scale")
    day = parse_cli_as_of(as_of, refuse_future=False).day
    say = (lambda _msg: None) if quiet else (lambda msg: click.echo(msg, err=True))
    counts = generate(out_dir, seed=seed, scale=scale, as_of=day, days=days, progress=say)
    total = sum(counts.values())
    click.echo(f"wrote {total:,} records to {out_dir} (as of {day}); load them with:")
    click.echo(f"  feedback-analytics ingest --config {out_dir / 'sources.toml'}")


@click.command("dashboard")
@click.option("--port", type=int, default=8501, show_default=True, help="Port to serve the dashboard on.")
@db_option
def dashboard(port: int, db: str | None) -> None:
    """Start the Streamlit dashboard on the same DuckDB file (read-only, short-lived connections)."""
    path = warehouse_file(db).resolve()
    env = {
        **os.environ,
        "FEEDBACK_DB": str(path),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT_DIR), os.environ.get("PYTHONPATH")])),
    }
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(PROJECT_DIR / "dashboards" / "app.py"),
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--client.toolbarMode",
        "viewer",
    ]
    click.echo(f"dashboard on http://localhost:{port} (warehouse {path}); stop it with Ctrl-C", err=True)
    # replace this process: a scheduler's SIGTERM then reaches Streamlit itself, leaving no orphan
    os.execve(sys.executable, command, env)
