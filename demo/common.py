"""What every demo source shares: time, random streams, Arrow columns, the tenants, the JSON-lines writer.

Writes no file of its own. The source modules build their rows as Arrow columns with these
helpers and write every JSON-lines file with `copy_jsonl` (DuckDB `COPY ... (format json)`:
one object a line, UTF-8 as is, rows in the query's order).

Time: `TimeFrame` is the history, whole days ending just before as_of 00:00 UTC; timestamps are
epoch microseconds until DuckDB or `iso` formats them. Randomness: `stream` gives each source
its own numpy Generator seeded from (seed, source name), so a source's data does not change
when another source draws more or less. Tenants: `TENANTS` (name -> projects) is what the
reactions call a tenant; the workspace names the same tenant by `demo_tenant_id(name)`.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from warehouse.contracts import Contract
from warehouse.sql import sql_literal

Progress = Callable[[str], None]

SECOND_US = 1_000_000
MINUTE_US = 60 * SECOND_US
HOUR_US = 60 * MINUTE_US
DAY_US = 24 * HOUR_US
EPOCH = dt.datetime(1970, 1, 1)
ISO_US = "%Y-%m-%dT%H:%M:%S.%fZ"

TENANTS: dict[str, tuple[str, ...]] = {
    "acme": ("support", "codegen", "docs"),
    "globex": ("support", "sales"),
    "initech": ("codegen", "analytics"),
    "umbrella": ("research", "support"),
}
TENANT_WEIGHTS = (0.4, 0.25, 0.2, 0.15)
# The workspace names a tenant by a uuid, the reactions by its name. The demo's workspace uuids are
# derived from the name (uuid5 in this namespace), the same for every --seed, so the seed
# seeds/tenants.csv can map both to one tenant.
DEMO_TENANT_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "feedback-analytics:demo-data:tenants")
NAMED_USERS = (
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
    "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter",
)  # fmt: skip


def demo_tenant_id(tenant: str) -> str:
    """The workspace tenant id (a uuid) of a demo tenant: uuid5 of its name, whatever the seed."""
    return str(uuid.uuid5(DEMO_TENANT_NAMESPACE, tenant))


@dataclass(frozen=True)
class TimeFrame:
    """The history: `days` whole days ending just before `as_of` 00:00 UTC."""

    as_of: dt.date
    days: int

    @property
    def end_us(self) -> int:
        return (self.as_of - EPOCH.date()).days * DAY_US

    @property
    def start_us(self) -> int:
        return self.end_us - self.days * DAY_US

    def days_ago_us(self, days: float) -> int:
        return self.end_us - int(days * DAY_US)


def stream(seed: int, source: str) -> np.random.Generator:
    """An independent random stream per source, derived from the seed."""
    return np.random.default_rng([seed, zlib.crc32(source.encode())])


def connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("set preserve_insertion_order = true")
    con.execute("set enable_progress_bar = false")
    con.execute("set TimeZone = 'UTC'")
    return con


def _day_weights(frame: TimeFrame) -> np.ndarray:
    """Relative volume per day: fewer events on weekends, slow growth over the history."""
    first = frame.as_of - dt.timedelta(days=frame.days)
    weekday_factor = np.array([1.0, 1.0, 1.0, 1.0, 0.95, 0.35, 0.3])
    weekdays = np.array([(first + dt.timedelta(days=i)).weekday() for i in range(frame.days)])
    growth = 0.75 + 0.5 * np.arange(frame.days) / max(frame.days - 1, 1)
    return weekday_factor[weekdays] * growth


def sample_times(
    rng: np.random.Generator,
    n: int,
    frame: TimeFrame,
    *,
    skip_last_days: int = 0,
    hour_mean: float = 14.0,
    hour_sd: float = 3.5,
) -> np.ndarray:
    """n sorted UTC timestamps (epoch microseconds) with weekday seasonality."""
    if skip_last_days >= frame.days:  # a history this short (demo-data --days): the days just before it
        frame = TimeFrame(as_of=frame.as_of - dt.timedelta(days=skip_last_days), days=frame.days)
        skip_last_days = 0
    weights = _day_weights(frame)
    if skip_last_days:
        weights[-skip_last_days:] = 0.0
    day = rng.choice(frame.days, size=n, p=weights / weights.sum()).astype(np.int64)
    hours = rng.normal(hour_mean, hour_sd, n) % 24.0
    within_day = np.minimum((hours * HOUR_US).astype(np.int64), DAY_US - 1)
    return np.sort(frame.start_us + day * DAY_US + within_day)


def categorical(rng: np.random.Generator, n: int, weights: Sequence[float]) -> np.ndarray:
    p = np.asarray(weights, dtype=float)
    return rng.choice(len(p), size=n, p=p / p.sum())


def categorical_by_row(rng: np.random.Generator, weights: np.ndarray) -> np.ndarray:
    """One draw per row from that row's own weights (rows x categories)."""
    cumulative = np.cumsum(weights / weights.sum(axis=1, keepdims=True), axis=1)
    u = rng.random(len(weights))[:, None]
    return np.minimum((u > cumulative).sum(axis=1), weights.shape[1] - 1)


def label_column(indices: np.ndarray, pool: Sequence[str], null: np.ndarray | None = None) -> pa.Array:
    """A string column as a dictionary over a small pool (null where `null` is true)."""
    codes = pa.array(np.asarray(indices, dtype=np.int32), mask=null)
    return pa.DictionaryArray.from_arrays(codes, pa.array(list(pool), pa.string()))


def pick_in_groups(
    rng: np.random.Generator, group: np.ndarray, groups: Sequence[Sequence[str]]
) -> tuple[np.ndarray, list[str]]:
    """For each row, a uniform pick within its group; returns indices into the flat pool."""
    flat = [text for texts in groups for text in texts]
    sizes = np.array([len(texts) for texts in groups])
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    within = (rng.random(len(group)) * sizes[group]).astype(np.int64)
    return offsets[group] + within, flat


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_BASE36 = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)


def strings_from_chars(chars: np.ndarray) -> pa.Array:
    """(n, width) ASCII bytes to a string column, without a Python loop."""
    n, width = chars.shape
    data = np.ascontiguousarray(chars, dtype=np.uint8)
    offsets = np.arange(n + 1, dtype=np.int64) * width
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))


def _hex_chars(raw: np.ndarray) -> np.ndarray:
    chars = np.empty((raw.shape[0], raw.shape[1] * 2), dtype=np.uint8)
    chars[:, 0::2] = _HEX[raw >> 4]
    chars[:, 1::2] = _HEX[raw & 0x0F]
    return chars


def _uuid4_chars(rng: np.random.Generator, n: int) -> np.ndarray:
    raw = rng.integers(0, 256, size=(n, 16), dtype=np.uint8)
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80
    hexed = _hex_chars(raw)
    chars = np.full((n, 36), ord("-"), dtype=np.uint8)
    for start, stop, src in ((0, 8, 0), (9, 13, 8), (14, 18, 12), (19, 23, 16), (24, 36, 20)):
        chars[:, start:stop] = hexed[:, src : src + stop - start]
    return chars


def uuid4s(rng: np.random.Generator, n: int) -> pa.Array:
    """n random version-4 UUIDs as text."""
    return strings_from_chars(_uuid4_chars(rng, n))


def uuid4_list(rng: np.random.Generator, n: int) -> list[str]:
    return uuid4s(rng, n).to_pylist()


def prefixed_chars(prefix: str, body: np.ndarray) -> np.ndarray:
    head = np.broadcast_to(np.frombuffer(prefix.encode(), dtype=np.uint8), (len(body), len(prefix)))
    return np.hstack([head, body])


def hex_ids(rng: np.random.Generator, n: int, prefix: str, n_chars: int) -> np.ndarray:
    raw = rng.integers(0, 256, size=(n, (n_chars + 1) // 2), dtype=np.uint8)
    return prefixed_chars(prefix, _hex_chars(raw)[:, :n_chars])


def base36_chars(values: np.ndarray, width: int) -> np.ndarray:
    values = values.astype(np.uint64).copy()
    chars = np.empty((len(values), width), dtype=np.uint8)
    for position in range(width - 1, -1, -1):
        chars[:, position] = _BASE36[(values % np.uint64(36)).astype(np.int64)]
        values //= np.uint64(36)
    return chars


def timestamp_column(us: np.ndarray, null: np.ndarray | None = None) -> pa.Array:
    return pa.array(np.asarray(us, dtype=np.int64).view("datetime64[us]"), mask=null)


def iso(us: int) -> str:
    return (EPOCH + dt.timedelta(microseconds=int(us))).strftime(ISO_US)


def compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def copy_jsonl(con: duckdb.DuckDBPyConnection, query: str, path: Path) -> None:
    """Newline-delimited JSON, UTF-8 as is, rows in the query's order."""
    con.execute(f"copy ({query}) to {sql_literal(str(path))} (format json)")


# How a contract's kinds are held in the Arrow tables the workspace rows are built in.
ARROW_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "json": pa.string(),  # the JSON text; written as a nested object
    "int": pa.int64(),
    "timestamp": pa.timestamp("us"),
}


def arrow_schema(contract: Contract) -> pa.Schema:
    """The columns of a contract's raw table, in its order, as an Arrow schema."""
    return pa.schema([(field.name, ARROW_TYPES[field.kind]) for field in contract.fields])


def user_pool(rng: np.random.Generator, n: int) -> list[str]:
    """Named users first (they show up in every source), then generated ids."""
    generated = strings_from_chars(hex_ids(rng, max(n - len(NAMED_USERS), 0), "user-", 6))
    return list(NAMED_USERS[:n]) + generated.to_pylist()
