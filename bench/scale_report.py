"""The Markdown of bench/scale.py's results: per scale the figures, the growth ratios, each goal met or not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# issue 30's goals, as bench/scale.py checks them on the two scales compared (small, large)
GOALS = {
    "build": "full build at most 12x its time at the smaller scale for 10x the data, pro rata",
    "nightly": "nightly after one new day at most 0.3x a full refresh (publish included), larger scale",
    "publish": "incremental publish after one new day at most 0.2x a full publish, larger scale",
    "queries": "dashboard page queries: p95 at most 300 ms on every page, larger scale",
    "memory": "peak memory of every command (ingest, build, publish, forget, report) at most 8 GB",
    "forget": "forget of 100 users at most 1.5x one user's cost, larger scale",
}


def _get(figures: dict, *keys: str) -> Any:
    for key in keys:
        if not isinstance(figures, dict) or figures.get(key) is None:
            return None
        figures = figures[key]
    return figures


def _seconds(value: Any) -> str:
    return "n/a" if value is None else f"{value:,.1f} s"


def _optional(figures: dict, phase: str, key: str) -> str:
    """The seconds of a command the code may lack (None recorded: "not available")."""
    if key in (figures.get(phase) or {}) and figures[phase][key] is None:
        return "not available"
    return _seconds(_get(figures, phase, key, "seconds"))


def _mb(value: Any) -> str:
    return "n/a" if value is None else f"{value:,.0f} MB"


ROWS: list[tuple[str, Callable[[dict], str]]] = [
    ("ingest, all sources", lambda f: _seconds(_get(f, "data+ingest", "ingest_seconds"))),
    ("ingest peak RSS", lambda f: _mb(_get(f, "data+ingest", "ingest_peak_rss_mb"))),
    ("source files (one at a time)", lambda f: _mb(_get(f, "data+ingest", "files_mb"))),
    ("full build", lambda f: _seconds(_get(f, "build", "seconds"))),
    ("full build peak RSS", lambda f: _mb(_get(f, "build", "peak_rss_mb"))),
    ("of which publish", lambda f: _seconds(_get(f, "build", "publish_seconds"))),
    ("new day: ingest", lambda f: _seconds(_get(f, "nightly", "nightly_ingest", "seconds"))),
    ("new day: nightly build", lambda f: _seconds(_get(f, "nightly", "nightly", "seconds"))),
    ("new day: of which publish", lambda f: _seconds(_get(f, "nightly", "nightly", "publish_seconds"))),
    ("new day: full refresh", lambda f: _seconds(_get(f, "nightly", "full_refresh", "seconds"))),
    ("new day: full refresh's publish", lambda f: _seconds(_get(f, "nightly", "full_refresh", "publish_seconds"))),
    ("new day: nightly peak RSS", lambda f: _mb(_get(f, "nightly", "nightly", "peak_rss_mb"))),
    ("`publish`", lambda f: _seconds(_get(f, "nightly", "publish", "seconds"))),
    ("`publish --full`", lambda f: _optional(f, "nightly", "publish_full")),
    ("`publish` peak RSS", lambda f: _mb(_get(f, "nightly", "publish", "peak_rss_mb"))),
    ("page queries: worst p95", lambda f: _worst_p95(f)),
    ("forget one user", lambda f: _seconds(_get(f, "forget", "one_user", "seconds"))),
    ("forget 100 users", lambda f: _optional(f, "forget", "batch_100")),
    ("forget peak RSS", lambda f: _mb(_peak(f, ("forget", "one_user"), ("forget", "batch_100")))),
    ("report", lambda f: _seconds(_get(f, "report", "seconds"))),
    ("report peak RSS", lambda f: _mb(_get(f, "report", "peak_rss_mb"))),
    ("warehouse", lambda f: _mb(_get(f, "disk", "warehouse_mb"))),
    ("serving file", lambda f: _mb(_get(f, "disk", "serving_mb"))),
    ("archive", lambda f: _mb(_get(f, "disk", "archive_mb"))),
]

# growth ratios (larger / smaller scale) of these figures
GROWTH: dict[str, tuple[str, ...]] = {
    "ingest": ("data+ingest", "ingest_seconds"),
    "build": ("build", "seconds"),
    "nightly": ("nightly", "nightly", "seconds"),
    "publish (nightly's)": ("nightly", "nightly", "publish_seconds"),
    "forget (one user)": ("forget", "one_user", "seconds"),
    "forget (100 users)": ("forget", "batch_100", "seconds"),
    "disk (warehouse)": ("disk", "warehouse_mb"),
    "disk (serving file)": ("disk", "serving_mb"),
}

PEAKS = [
    ("data+ingest", "ingest_peak_rss_mb"),
    ("build", "peak_rss_mb"),
    ("nightly", "nightly", "peak_rss_mb"),
    ("nightly", "full_refresh", "peak_rss_mb"),
    ("nightly", "publish", "peak_rss_mb"),
    ("nightly", "publish_full", "peak_rss_mb"),
    ("forget", "one_user", "peak_rss_mb"),
    ("forget", "batch_100", "peak_rss_mb"),
    ("report", "peak_rss_mb"),
]


def _peak(figures: dict, *places: tuple[str, ...]) -> float | None:
    values = [_get(figures, *place, "peak_rss_mb") for place in places]
    return max((v for v in values if v is not None), default=None)


def _worst_p95(figures: dict) -> str:
    pages = _get(figures, "queries", "pages") or {}
    if not pages:
        return "n/a"
    page, worst = max(pages.items(), key=lambda item: item[1]["p95_ms"])
    return f"{worst['p95_ms']} ms ({page})"


def _ratio(large: Any, small: Any) -> float | None:
    return None if large is None or small in (None, 0) else large / small


def _verdict(ratio: float | None, at_most: float) -> str:
    return "not measured" if ratio is None else f"{ratio:.2f}x: {'met' if ratio <= at_most else 'NOT met'}"


def build_bound(growth: float) -> float:
    """The full build's allowed growth for `growth` times the data: 12x for 10x (near-linear), pro rata."""
    return 1.2 * growth


def goals(small: dict, large: dict, growth: float = 10.0) -> list[str]:
    """Each goal met or not on the two scales compared; `growth`: how many times the data the larger scale holds."""
    build = _ratio(_get(large, "build", "seconds"), _get(small, "build", "seconds"))
    nightly = _ratio(_get(large, "nightly", "nightly", "seconds"), _get(large, "nightly", "full_refresh", "seconds"))
    publish = _ratio(_get(large, "nightly", "publish", "seconds"), _get(large, "nightly", "publish_full", "seconds"))
    forget = _ratio(_get(large, "forget", "batch_100", "seconds"), _get(large, "forget", "one_user", "seconds"))
    pages = _get(large, "queries", "pages") or {}
    worst = max((page["p95_ms"] for page in pages.values()), default=None)
    peaks = [_get(scale, *place) for scale in (small, large) for place in PEAKS]
    peak = max((value for value in peaks if value is not None), default=None)
    return [
        f"| {GOALS['build']} | {_verdict(build, build_bound(growth))} (allowed {build_bound(growth):.1f}x for "
        f"{growth:g}x the data) |",
        f"| {GOALS['nightly']} | {_verdict(nightly, 0.3)} |",
        f"| {GOALS['publish']} | {_verdict(publish, 0.2)} |",
        f"| {GOALS['queries']} | "
        + ("not measured" if worst is None else f"worst {worst} ms: {'met' if worst <= 300 else 'NOT met'}")
        + " |",
        f"| {GOALS['memory']} | "
        + ("not measured" if peak is None else f"largest {peak:,.0f} MB: {'met' if peak <= 8192 else 'NOT met'}")
        + " |",
        f"| {GOALS['forget']} | {_verdict(forget, 1.5)} |",
    ]


def markdown(saved: dict) -> str:
    names = saved.get("scales_compared") or sorted(saved.get("scales", {}), key=float)
    scales = {name: saved.get("scales", {}).get(name, {}) for name in names}
    loads = {name: [f.get("load_start", "?") for f in figs.values()] for name, figs in scales.items()}
    lines = [
        f"Run {saved.get('started')} on {saved.get('machine')}, FEEDBACK_MEMORY_LIMIT {saved.get('memory_limit')}.",
        "Load average (1, 5, 15 min) at the start of each phase: "
        + "; ".join(f"scale {name}: " + ", ".join(values) for name, values in loads.items()),
        "",
        "| figure | " + " | ".join(f"scale {name}" for name in names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    lines += [f"| {label} | " + " | ".join(cell(scales[name]) for name in names) + " |" for label, cell in ROWS]
    pages = sorted({page for figs in scales.values() for page in (_get(figs, "queries", "pages") or {})})
    if pages:
        lines += ["", "| page p95 | " + " | ".join(f"scale {name}" for name in names) + " |"]
        lines += ["|---|" + "---:|" * len(names)]
        for page in pages:
            cells = [_get(scales[name], "queries", "pages", page, "p95_ms") for name in names]
            lines.append(f"| {page} | " + " | ".join("n/a" if c is None else f"{c} ms" for c in cells) + " |")
    if len(names) >= 2:
        small, large = scales[names[0]], scales[names[-1]]
        lines += ["", f"| growth (scale {names[-1]} / scale {names[0]}) | ratio |", "|---|---:|"]
        for label, place in GROWTH.items():
            ratio = _ratio(_get(large, *place), _get(small, *place))
            lines.append(f"| {label} | {'n/a' if ratio is None else f'{ratio:.1f}x'} |")
        growth = float(names[-1]) / float(names[0])
        lines += ["", "| goal (issue 30) | result |", "|---|---|", *goals(small, large, growth)]
    return "\n".join(lines)
