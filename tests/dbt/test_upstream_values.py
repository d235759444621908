"""No value an upstream may send fails a build: an error-level test failure means a defect of ours.

Every `accepted_values`, `accepted_range` and `relationships` test of the project that sits on a column
upstream controls must either be a warning (`config: {severity: warn}`) or be guarded by the source contract
(warehouse/contracts.py), which quarantines at ingest every value the test would reject. The test reads the
parsed project (target/manifest.json) and the contracts; it does not need data.

Which columns upstream controls:

- a column of a raw source (schema `raw`): the contract field of the same name;
- a column of a staging model (`models/staging/`, where upstream values enter): every one, by default the
  contract field of the same name in the model's raw tables. A column renamed or read out of a JSON field
  says where it comes from in its YAML, `meta: {upstream_field: <raw table>.<field>}` (for a JSON field the
  JSON column: its parts have no contract, so nothing guards them); a column we compute says
  `meta: {upstream_controlled: false}`. A tested staging column that says neither and has no field of its
  name fails this test: where its values come from must be written down;
- a column of an intermediate model or a mart: the one its YAML names in `meta.upstream_field`; else, when
  its name is a contract field of one of the raw tables it is built from, that field (a column passed through
  keeps its name); never when it says `meta: {upstream_controlled: false}`.

A contract guards a test when:

- accepted_values: the field has an `enum` (or `allowed_values`) and all of it is among the test's values
  (compared lower-cased on models, which staging lower-cases; on a raw source only `allowed_values` guard,
  since the raw table keeps an enum value in the case it was read);
- accepted_range: the field's minimum and maximum lie within every bound the test sets;
- relationships to a seed: the field's enum values are all in the seed's column.

`not_null` and `expression_is_true` are not audited here: the first is guarded by `required` where the
contract has it, the second names no column.

Offenders in folders other engineers own (models/*/reactions/*, models/*/session_feedback/*) are listed in
PENDING_ELSEWHERE until they fix them; an entry that is no longer an offender fails the test too, so the
list only shrinks.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.dbt import REPO, run_dbt
from warehouse.connection import connect
from warehouse.contracts import CONTRACTS, Field

pytestmark = pytest.mark.slow

VALUE_TESTS = ("accepted_values", "accepted_range", "relationships")
FIELDS = {contract.table: {field.name: field for field in contract.fields} for contract in CONTRACTS}

# (model or source table, column, test): offenders in folders others own, to be fixed by them
PENDING_ELSEWHERE: frozenset[tuple[str, str, str]] = frozenset()


@dataclass(frozen=True)
class ValueTest:
    node: str  # the model, seed or source table it tests
    column: str
    test: str
    kwargs: dict[str, Any]
    severity: str
    is_source: bool
    is_staging: bool
    meta: dict[str, Any]
    raw_tables: frozenset[str]  # the raw tables the tested node is built from


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("upstream_values")
    warehouse = work / "warehouse.duckdb"
    connect(warehouse).close()
    result = run_dbt(["parse"], warehouse=warehouse, work_dir=work)
    assert result.returncode == 0, result.stdout[-4000:]
    return json.loads((work / "target" / "manifest.json").read_text())


def raw_tables_of(manifest: dict[str, Any], unique_id: str) -> frozenset[str]:
    nodes = {**manifest["nodes"], **manifest["sources"]}
    found, stack, seen = set(), [unique_id], set()
    while stack:
        node = nodes.get(stack.pop())
        if node is None:
            continue
        if node["resource_type"] == "source" and node["schema"] == "raw":
            found.add(node["name"])
        for parent in node.get("depends_on", {}).get("nodes", []):
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return frozenset(found)


def value_tests(manifest: dict[str, Any]) -> list[ValueTest]:
    nodes = {**manifest["nodes"], **manifest["sources"]}
    found = []
    for node in manifest["nodes"].values():
        metadata = node.get("test_metadata") or {}
        if node["resource_type"] != "test" or metadata.get("name") not in VALUE_TESTS or not node.get("column_name"):
            continue
        tested_id = node.get("attached_node") or node["depends_on"]["nodes"][0]
        tested = nodes[tested_id]
        column = tested.get("columns", {}).get(node["column_name"], {})
        found.append(
            ValueTest(
                node=tested["name"],
                column=node["column_name"],
                test=metadata["name"],
                kwargs=metadata["kwargs"],
                severity=node["config"]["severity"].lower(),
                is_source=tested["resource_type"] == "source",
                is_staging=tested["resource_type"] == "model" and tested["fqn"][1] == "staging",
                meta=column.get("meta") or {},
                raw_tables=raw_tables_of(manifest, tested_id),
            )
        )
    return found


def upstream_field(test: ValueTest) -> tuple[Field | None, str | None]:
    """The contract field upstream fills the column from (None: ours), or a complaint."""
    if test.meta.get("upstream_controlled") is False:
        return None, None
    declared = test.meta.get("upstream_field")
    if declared:
        table, _, name = str(declared).partition(".")
        field = FIELDS.get(table, {}).get(name)
        return field, None if field else f"meta.upstream_field {declared!r} names no contract field"
    tables = [test.node] if test.is_source else sorted(test.raw_tables)
    same_name = [FIELDS[table][test.column] for table in tables if test.column in FIELDS.get(table, {})]
    if same_name:
        return same_name[0], None
    if test.is_staging:
        return None, "a staging column without a field of its name: say meta.upstream_field or upstream_controlled"
    return None, None


def seed_values(reference: str, column: str) -> set[str] | None:
    match = re.fullmatch(r"ref\(['\"](\w+)['\"]\)", reference.strip())
    path = REPO / "seeds" / f"{match[1]}.csv" if match else None
    if path is None or not path.is_file():
        return None
    with path.open(newline="", encoding="utf-8") as handle:
        return {row[column].lower() for row in csv.DictReader(handle)}


def number(bound: object) -> float | None | bool:
    """A test's bound as a number; None when it has none, False when it is an expression (a var)."""
    if bound is None:
        return None
    try:
        return float(bound)
    except (TypeError, ValueError):
        return False


def guarded(test: ValueTest, field: Field) -> bool:
    """Whether the contract quarantines at ingest every value the test would reject."""
    if test.test == "accepted_values":
        values = {str(value).lower() for value in test.kwargs.get("values", [])}
        if field.allowed_values:
            return {str(value) for value in field.allowed_values} <= values
        return bool(field.enum) and not test.is_source and {value.lower() for value in field.enum} <= values
    if test.test == "accepted_range":
        low, high = (number(test.kwargs.get(bound)) for bound in ("min_value", "max_value"))
        if low is False or high is False:  # a bound written as an expression: nothing to compare
            return False
        low_ok = low is None or (field.minimum is not None and field.minimum >= low)
        high_ok = high is None or (field.maximum is not None and field.maximum <= high)
        return low_ok and high_ok
    if test.test == "relationships":
        targets = seed_values(test.kwargs.get("to", ""), test.kwargs.get("field", ""))
        return bool(field.enum) and targets is not None and {value.lower() for value in field.enum} <= targets
    return False


def offenders(tests: list[ValueTest]) -> dict[tuple[str, str, str], str]:
    found = {}
    for test in tests:
        if test.severity == "warn":
            continue
        field, complaint = upstream_field(test)
        if complaint:
            found[(test.node, test.column, test.test)] = complaint
        elif field is not None and not guarded(test, field):
            found[(test.node, test.column, test.test)] = (
                f"upstream controls it (contract field {field.name}) and the contract does not quarantine what "
                "the test rejects: make the test `severity: warn`, or guard the field in warehouse/contracts.py"
            )
    return found


def test_the_audit_sees_every_upstream_value_test(manifest: dict[str, Any]) -> None:
    """The audit is not vacuous: it finds the value tests of the staging models and sources."""
    tests = value_tests(manifest)
    on_staging = {(t.node, t.column) for t in tests if t.is_staging}
    assert ("stg_analyzer__events", "outcome") in on_staging and (
        "stg_reactions__index_rows",
        "origin",
    ) in on_staging
    assert any(t.is_source for t in tests)
    # a value inside upstream's metadata JSON, which no contract checks: only a warning may test it
    in_json = next(t for t in tests if (t.node, t.column) == ("stg_workspace__sessions", "eval_session_type"))
    field, _ = upstream_field(in_json)
    assert field is not None and not guarded(in_json, field), "unguarded upstream value: only a warning may test it"


def test_no_error_level_test_rejects_a_value_upstream_may_send(manifest: dict[str, Any]) -> None:
    found = offenders(value_tests(manifest))
    ours = {key: why for key, why in found.items() if key not in PENDING_ELSEWHERE}
    assert not ours, "error-level tests on upstream values:\n" + "\n".join(
        f"  {node}.{column} {test}: {why}" for (node, column, test), why in sorted(ours.items())
    )
    stale = PENDING_ELSEWHERE - set(found)
    assert not stale, f"fixed since: remove from PENDING_ELSEWHERE {sorted(stale)}"
