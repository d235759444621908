"""A contract turned into one SQL statement that parses, type-checks and validates a batch.

The database does the row work: Python only writes the SQL. Two kinds of batch:

* JSON batches (JSONL lines, JSON blobs): a relation with `_line`, `_uri`,
  `_raw` (the text), `_utf8_ok`. Each record is parsed once with
  `json_transform` into a struct of JSON values, so a value of the wrong JSON
  type is caught, not silently cast.
* Typed batches (SQLite, PostgreSQL): a relation whose columns already carry
  the field names; values are cast and checked the same way.

The statement returns `_line`, `_uri`, `_reason` ('' when the row is valid),
`_skip` (a parsed record that is not the source's own: `Contract.claim`) and
one column per contract field, parsed to its warehouse type.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from warehouse.contracts import Contract, Field
from warehouse.sql import quote, sql_literal

# the earliest day a timestamp or date of any source may hold (docs/security.md, "No single input stops the night")
EARLIEST_DATE = "2000-01-01"


def _json_type_ok(kind: str, j: str) -> str:
    """Whether a JSON value has the kind's type, read off its first character (cheaper than json_type)."""
    first = f"ascii(cast({j} as varchar))"
    if kind in ("string", "timestamp", "date"):
        return f"({first} = 34)"  # "
    if kind == "float":
        return f"({first} between 48 and 57 or {first} = 45)"  # digit or minus
    if kind == "int":
        return f"regexp_full_match(cast({j} as varchar), '-?[0-9]+')"
    if kind == "string_list":
        return f"({first} = 91)"  # [
    return "true"


_KIND_WORDS = {
    "string": "a string",
    "timestamp": "an ISO-8601 timestamp",
    "date": "a date (YYYY-MM-DD)",
    "int": "an integer",
    "float": "a number",
    "string_list": "a list of strings",
    "json": "JSON",
}


def _struct_spec(fields: Iterable[Field]) -> str:
    """The json_transform structure: every path a field can come from, leaves as JSON."""
    tree: dict = {}
    for fld in fields:
        for path in fld.json_paths:
            node = tree
            for part in path[:-1]:
                child = node.get(part)
                if not isinstance(child, dict):
                    child = node[part] = {}
                node = child
            node.setdefault(path[-1], "VARCHAR" if fld.free_text else "JSON")
        if fld.inside:
            tree.setdefault(fld.inside, "JSON")
    return json.dumps(tree)


def _json_value(fld: Field) -> str:
    """Coalesce the JSON value of a field over its paths (JSON null counts as absent)."""
    exprs = ["_s." + ".".join(quote(p) for p in path) for path in fld.json_paths]
    if fld.inside:  # the key inside a JSON object, or inside a JSON string that holds one
        inside = f"_s.{quote(fld.inside)}"
        holder = f"case when json_type({inside}) = 'VARCHAR' then try_cast({inside} ->> '$' as json) else {inside} end"
        key = f"json_extract({holder}, {sql_literal('$.' + fld.name)})"
        exprs.append(f"case when json_type({key}) <> 'NULL' then {key} end")  # JSON null is absent
    return exprs[0] if len(exprs) == 1 else f"coalesce({', '.join(exprs)})"


def _parse(kind: str, raw: str, *, from_json: bool, raw_is_text: bool) -> str:
    """SQL parsing `raw` to the field's warehouse type, NULL when it can't be."""
    text = f"({raw} ->> '$')" if from_json else f"cast({raw} as varchar)"
    if kind == "string":
        return text
    if kind == "int":
        return f"try_cast({raw} as bigint)"
    if kind == "float":
        return f"try_cast({raw} as double)"
    if kind == "timestamp":
        if from_json or raw_is_text:
            return f"cast(try_cast({text} as timestamptz) as timestamp)"
        return f"try_cast({raw} as timestamp)"
    if kind == "date":
        return f"try_cast({text} as date)"
    if kind == "string_list":
        return f"try_cast({raw} as varchar[])"
    if kind == "json":
        return f"{raw}" if from_json else f"try_cast({raw} as json)"
    raise ValueError(kind)


def _checks(
    fld: Field,
    *,
    present: str,
    type_ok: str,
    value: str,
    got_type: str,
    got_text: str,
    parse_check: bool,
    null_is_unknown: bool = False,
) -> list[str]:
    """CASE expressions, each yielding a reason when the field breaks a rule.

    `null_is_unknown`: a typed batch's NULL in an `empty_is_null` field is its unknown value, not a missing one.
    """
    name = fld.name
    if fld.pattern_reason:  # never echo a value the contract calls private
        got_text = "'(value withheld)'"
    checks = []
    if fld.required and fld.default_sql is None and not null_is_unknown:
        checks.append(f"case when not {present} then {sql_literal(name + ': missing required field')} end")
    checks.append(
        f"case when {present} and not {type_ok} then "
        f"{sql_literal(name + ': expected ' + _KIND_WORDS[fld.kind] + ', got ')} || {got_type} end"
    )
    if parse_check and fld.kind in ("timestamp", "date", "int"):
        # an empty string is the unknown value of an `empty_is_null` field: NULL, not a parse failure
        empty_ok = f" and {got_text} <> ''" if fld.empty_is_null else ""
        checks.append(
            f"case when {present} and {type_ok} and {value} is null{empty_ok} then "
            f"{sql_literal(name + ': not ' + _KIND_WORDS[fld.kind] + ': ')} || left({got_text}, 80) end"
        )
    if fld.kind in ("timestamp", "date"):
        # a date before any AI-agent feedback existed (year 1, 1900) would stretch every daily series of the
        # period marts back to it (one row per day and series): refused here rather than a night lost there
        checks.append(
            f"case when {value} < {sql_literal(EARLIEST_DATE)}::date then {sql_literal(name + ': ')} || "
            f"cast({value} as varchar) || {sql_literal(f' is before {EARLIEST_DATE}')} end"
        )
    if fld.enum:
        allowed = ", ".join(sql_literal(v) for v in fld.enum)
        checks.append(
            f"case when not ({value} in ({allowed}) or lower({value}) in ({allowed})) then "
            f"{sql_literal(name + ': ')} || left({value}, 80) || "
            f"{sql_literal(' is not one of ' + ', '.join(fld.enum))} end"
        )
    if fld.minimum is not None or fld.maximum is not None:
        low = "-inf" if fld.minimum is None else f"{fld.minimum:g}"
        high = "inf" if fld.maximum is None else f"{fld.maximum:g}"
        conds = []
        if fld.minimum is not None:
            conds.append(f"{value} < {fld.minimum}")
        if fld.maximum is not None:
            conds.append(f"{value} > {fld.maximum}")
        checks.append(
            f"case when {' or '.join(conds)} then {sql_literal(name + ': ')} || "
            f"cast({value} as varchar) || {sql_literal(f' is outside {low}..{high}')} end"
        )
    if fld.pattern:
        said = fld.pattern_reason or f"does not match {fld.pattern}"
        checks.append(
            f"case when not regexp_full_match({value}, {sql_literal(fld.pattern)}) then "
            f"{sql_literal(name + ' ' + said)} end"
        )
    if fld.allowed_values:
        allowed = ", ".join(str(v) for v in fld.allowed_values)
        checks.append(
            f"case when {value} not in ({allowed}) then "
            f"{sql_literal('unsupported ' + name + ' ')} || cast({value} as varchar) || "
            f"{sql_literal(' (supported: ' + allowed + ')')} end"
        )
    return checks


def _row_rule_checks(contract: Contract) -> list[str]:
    """CASE expressions over the parsed values, each yielding its reason when the row breaks a rule across fields."""
    values = {fld.name: quote("v__" + fld.name) for fld in contract.fields}
    return [f"case when {rule.format(**values)} then {sql_literal(reason)} end" for rule, reason in contract.row_rules]


def _all_pass(checks: list[str]) -> str:
    """True when no check yields a reason: cheap booleans, so the reasons are built only for bad rows."""
    conditions = []
    for check in checks:
        condition = check.removeprefix("case when ").split(" then ", 1)[0]
        conditions.append(f"not coalesce({condition}, false)")
    return "(" + " and ".join(conditions) + ")"


def _finals(contract: Contract) -> list[str]:
    finals = []
    for fld in contract.fields:
        value = f"v__{fld.name}"
        if fld.default_sql is not None:
            default = fld.default_sql.format(**{f.name: quote("v__" + f.name) for f in contract.fields})
            finals.append(f"coalesce({quote(value)}, {default}) as {quote(fld.name)}")
        else:
            finals.append(f"{quote(value)} as {quote(fld.name)}")
    return finals


def _struct_type(tree: dict) -> str:
    """The same structure as a DuckDB type, for read_json's `columns`."""
    parts = []
    for name, node in tree.items():
        kind = node if isinstance(node, str) else _struct_type(node)
        parts.append(f"{quote(name)} {kind}")
    return "STRUCT(" + ", ".join(parts) + ")"


def lines_parsed_sql(contract: Contract, relation: str) -> str:
    """Parse a relation of raw lines (`ingest.jsonl` batches) to `_line, _uri, _parse_error, _s`."""
    struct = _struct_spec(contract.fields)
    return f"""
        with lines as (
            select _line, _uri, _raw, _utf8_ok,
                _utf8_ok and json_valid(_raw) as _is_json
            from {relation}
        )
        select _line, _uri,
            case
                when not _utf8_ok then 'invalid UTF-8'
                when not _is_json then 'invalid JSON'
                when left(ltrim(_raw, ' ' || chr(9)), 1) <> '{{'
                    then 'not a JSON object: ' || lower(json_type(_raw))
            end as _parse_error,
            case when _is_json then json_transform(_raw, {sql_literal(struct)}) end as _s
        from lines
        -- blank lines are not rows (json_valid first: trim is the slower test)
        where _is_json or not _utf8_ok or trim(_raw, ' ' || chr(9) || chr(10) || chr(13)) <> ''
    """


def read_json_parsed_sql(contract: Contract, path: str, uri: str | None = None, *, numbered: bool = False) -> str:
    """Parse a clean JSON-lines file with DuckDB's reader (fast, parallel); raises on any malformed line.

    It yields no line numbers, so the bad lines of a file are found by the
    line path's SQL (`lines_parsed_sql`, `ingest.bad_lines`) and set apart, for
    the quarantine to hold exactly what was read. `uri` names the file the rows
    come from when `path` holds a part of it. `numbered`: `_line` is the row's place among the rows read
    (1, 2, ...: DuckDB's reader keeps the order of the file), not its line number, and a malformed line is
    a row of absent fields instead of an error (`ignore_errors`: a row a contract refuses for a missing
    field, where it has one).
    """
    tree = json.loads(_struct_spec(contract.fields))
    columns = (
        "{"
        + ", ".join(
            f"{sql_literal(name)}: {sql_literal(node if isinstance(node, str) else _struct_type(node))}"
            for name, node in tree.items()
        )
        + "}"
    )
    line = "row_number() over ()" if numbered else "null::bigint"
    lenient = ", ignore_errors = true" if numbered else ""
    return f"""
        select {line} as _line, {sql_literal(uri or path)} as _uri, null::varchar as _parse_error,
            record as _s
        from read_json({sql_literal(path)}, format = 'newline_delimited', records = true,
                       columns = {columns}, maximum_object_size = 67108864{lenient}) as record
    """


def _claim_sql(contract: Contract) -> str:
    """SQL: the parsed record claims to be one of the contract's records (true when the contract claims all)."""
    if not contract.claim:
        return "true"
    kinds = {fld.name: fld.kind for fld in contract.fields}
    claims = []
    for name, values in contract.claim:
        j = quote("j__" + name)
        listed = "[" + ", ".join(sql_literal(v) for v in values) + "]"
        if kinds[name] == "string_list":
            claims.append(f"coalesce(list_has_any(try_cast({j} as varchar[]), {listed}), false)")
        else:
            claims.append(f"coalesce(({j} ->> '$') in ({', '.join(sql_literal(v) for v in values)}), false)")
    return "(" + " or ".join(claims) + ")"


def json_batch_sql(contract: Contract, parsed_sql: str) -> str:
    """Validate parsed JSON records (`_line, _uri, _parse_error, _s`) against a contract."""
    parsed_cols, typed_cols, checks = [], [], []
    for fld in contract.fields:
        parsed_cols.append(f"{_json_value(fld)} as {quote('j__' + fld.name)}")
        j = quote("j__" + fld.name)
        present = f"({j} is not null)"
        type_ok = "true" if fld.free_text else _json_type_ok(fld.kind, j)
        value = quote("v__" + fld.name)
        parse = j if fld.free_text else _parse(fld.kind, j, from_json=True, raw_is_text=False)
        typed_cols.append(f"{parse} as {value}")
        checks.extend(
            _checks(
                fld,
                present=present,
                type_ok=type_ok,
                value=value,
                got_type=f"lower(json_type({j}))",
                got_text=f"({j} ->> '$')",
                parse_check=True,
            )
        )
    checks.extend(_row_rule_checks(contract))
    return f"""
        with parsed as (
            {parsed_sql}
        ),
        fields as (
            select _line, _uri, _parse_error, {", ".join(parsed_cols)}
            from parsed
        ),
        typed as (
            select *, {", ".join(typed_cols)}
            from fields
        ),
        claimed as (
            select *, _parse_error is null and not {_claim_sql(contract)} as _skip
            from typed
        ),
        checked as (
            select *,
                case
                    when _parse_error is not null then _parse_error
                    when _skip or {_all_pass(checks)} then ''
                    else concat_ws('; ', {", ".join(checks)})
                end as _reason
            from claimed
        )
        select _line, _uri, _reason, _skip, {", ".join(_finals(contract))}
        from checked
    """


def typed_batch_sql(contract: Contract, relation: str, column_types: dict[str, str]) -> str:
    """Validate a typed batch (columns named as the contract's fields) against a contract.

    `column_types` maps the relation's columns to their DuckDB types; a field
    the relation lacks is absent (NULL).
    """
    typed_cols, checks = [], []
    for fld in contract.fields:
        col_type = column_types.get(fld.name)
        raw = quote(fld.name) if col_type else "null"
        raw_is_text = bool(col_type) and col_type.upper() in ("VARCHAR", "TEXT", "STRING")
        value = quote("v__" + fld.name)
        parse = _parse(fld.kind, raw, from_json=False, raw_is_text=raw_is_text)
        if fld.kind == "string_list" and raw_is_text:
            parse = f"try_cast(try_cast({raw} as json) as varchar[])"
        typed_cols.append(f"{parse} as {value}")
        present = f"({raw} is not null)"
        type_ok = f"({value} is not null)"
        if fld.empty_is_null:  # NULL and '' are the unknown value (a purge archive holds undated events as NULL)
            type_ok = f"({value} is not null or cast({raw} as varchar) = '')"
        got = f"left(cast({raw} as varchar), 80)"
        checks.extend(
            _checks(
                fld,
                present=present,
                type_ok=type_ok,
                value=value,
                got_type=got,
                got_text=got,
                parse_check=False,
                null_is_unknown=fld.empty_is_null and col_type is not None,
            )
        )
    checks.extend(_row_rule_checks(contract))
    return f"""
        with typed as (
            select *, {", ".join(typed_cols)}
            from {relation}
        ),
        checked as (
            select *, concat_ws('; ', {", ".join(checks)}) as _reason
            from typed
        )
        select _line, _uri, _reason, false as _skip, {", ".join(_finals(contract))}
        from checked
    """
