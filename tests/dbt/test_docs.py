"""`dbt docs generate` works: every model, source and exposure is documented in the generated catalog."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from operations.build import dbt_command
from warehouse.connection import connect

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_dbt_docs_generate(tmp_path: Path) -> None:
    db = tmp_path / "docs.duckdb"
    connect(db).close()  # an empty warehouse with the raw schema
    env = {**os.environ, "FEEDBACK_DB": str(db), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    target = tmp_path / "target"
    built = subprocess.run(
        # the relations the catalog describes; the data and unit tests check rows, not the docs (other modules run them)
        dbt_command("build", "--exclude", "resource_type:test", unit_tests=False, work_dir=tmp_path),
        env=env,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout[-4000:]
    generated = subprocess.run(dbt_command("docs generate", work_dir=tmp_path), env=env, capture_output=True, text=True)
    assert generated.returncode == 0, generated.stdout[-4000:]
    manifest = json.loads((target / "manifest.json").read_text())
    catalog = json.loads((target / "catalog.json").read_text())
    models = {k: v for k, v in manifest["nodes"].items() if v["resource_type"] == "model"}
    assert models, "no models in the manifest"
    undocumented = [k for k, v in models.items() if not v["description"].strip()]
    assert not undocumented, f"models without a description: {undocumented}"
    missing_columns = [
        f"{k}.{column}"
        for k, v in models.items()
        for column in catalog["nodes"].get(k, {}).get("columns", {})
        if column.lower() not in {c.lower() for c in v["columns"]}
    ]
    assert not missing_columns, f"columns built but not described: {missing_columns[:20]}"
    assert (target / "index.html").exists()
