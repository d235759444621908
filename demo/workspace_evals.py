"""Source 4, workspace evals: golden sessions, their replays and the eval runs.

Rows for two files `demo.workspace` writes (upstream: the agent workspace's PostgreSQL `sessions`
and `eval_runs` tables, exported as JSON lines):
- OUT/workspace/sessions.jsonl: 3 golden sets x 8 golden sessions (`metadata.golden`: set,
  promotion, snapshot), and one replay per golden session, agent config and weekly run
  (`metadata`: `eval_source`, `eval_run_id`, `eval_result` with the per-dimension results);
- OUT/workspace/eval_runs.jsonl: 3 agent configs x 10 weekly runs per golden set, with the
  columns of the eval runs contract (`warehouse.contracts.WORKSPACE_EVAL_RUNS`), `results` a
  JSON object (`agent_config`, `bySession`).

`CELL_PATTERNS` makes cells regress on the latest run, get fixed on it, flip-flop (flaky),
improve early or always fail; every other cell passes. Each failed replay also becomes a
`session` feedback row (`demo.workspace_feedback.replay_failure_feedback`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from demo.common import (
    DAY_US,
    HOUR_US,
    MINUTE_US,
    SECOND_US,
    TimeFrame,
    arrow_schema,
    compact_json,
    iso,
    uuid4_list,
)
from demo.workspace_sessions import EVAL_AGENTS, Workspace
from warehouse.contracts import WORKSPACE_EVAL_RUNS

EVAL_RUN_SCHEMA = arrow_schema(WORKSPACE_EVAL_RUNS)


@dataclass(frozen=True)
class GoldenSet:
    """A named set of golden sessions of one session type, in one tenant."""

    name: str
    session_type: str
    tenant: str
    dimensions: tuple[str, ...]


GOLDEN_SETS: tuple[GoldenSet, ...] = (
    GoldenSet("pe-extraction", "response", "acme", ("valuation", "revenue", "sector", "deal_stage")),
    GoldenSet("chat-smoke", "chat", "acme", ("tool_calls", "tool_args", "final_message", "entities_created")),
    GoldenSet("tool-accuracy", "tool", "globex", ("output", "entity_mutations")),
)
GOLDEN_PER_SET = 8
EVAL_RUNS = 10
# Pass (P) / fail (F) per weekly run, oldest first, for the cells that are not always passing.
CELL_PATTERNS: dict[tuple[str, int, str], str] = {
    ("pe-extraction", 2, "baseline"): "PPPPPPPPPF",  # regresses on the latest run
    ("pe-extraction", 5, "candidate-prompt-v2"): "FFFFFFFFFP",  # fixed on the latest run
    ("pe-extraction", 3, "candidate-model-swap"): "PFPFPFPFPP",  # flaky
    ("chat-smoke", 6, "candidate-prompt-v2"): "PPPPPPPPPF",  # regresses on the latest run
    ("chat-smoke", 0, "candidate-model-swap"): "FFFPPPPPPP",  # fixed a while ago
    ("chat-smoke", 1, "candidate-model-swap"): "FFFPPPPPPP",
    ("chat-smoke", 2, "candidate-model-swap"): "FFFFPPPPPP",
    ("tool-accuracy", 7, "candidate-model-swap"): "FFFFFFFFFF",  # always fails
    ("tool-accuracy", 1, "candidate-prompt-v2"): "PFFPPPPPPP",
}
GOLDEN_MESSAGES = (
    "Compare the last three PE deals in healthcare by EV/EBITDA",
    "Extrais la valorisation et le chiffre d'affaires de ce mémo",
    "帮我总结这家公司的融资历史",
    "Add the contacts from this email thread to HubSpot",
    "What changed in Globex's 10-K risk factors this year?",
    "Draft a follow-up to Zoë about the Q3 pipeline",
    "List open deals over $5M with no activity in 30 days",
    "Fetch the latest SEC filing for Initech and extract revenue",
)
DIVERGENCE_VALUES: dict[str, tuple[str, str]] = {
    "valuation": ("€120M", "€12M"),
    "revenue": ("$48.2M", "$4.82M"),
    "sector": ("Fintech", "Banking"),
    "deal_stage": ("LOI", "Due diligence"),
    "tool_calls": ("crm.search, crm.update", "crm.search"),
    "tool_args": ("{'limit': 50}", "{'limit': 5}"),
    "final_message": ("mentions the Q3 pipeline", "no mention of the Q3 pipeline"),
    "entities_created": ("2 contacts", "0 contacts"),
    "output": ("12 rows", "0 rows"),
    "entity_mutations": ("deal.stage updated", "no mutation"),
}


@dataclass(frozen=True)
class FailedReplay:
    """A replay that diverged from its golden session (it becomes a feedback row)."""

    tenant: str
    agent_id: str
    golden_id: str
    replay_id: str
    completed_us: int
    dimensions: tuple[str, ...]


@dataclass
class Evals:
    """Golden sessions, replays and eval runs (rows as dicts), plus the failed replays."""

    golden: list[dict[str, object]]
    replays: list[dict[str, object]]
    runs: list[dict[str, object]]
    failed: list[FailedReplay]


def generate_evals(rng: np.random.Generator, ids: Workspace, frame: TimeFrame) -> Evals:
    evals = Evals(golden=[], replays=[], runs=[], failed=[])
    for set_index, golden_set in enumerate(GOLDEN_SETS):
        golden_ids = _golden_sessions(rng, evals, set_index, golden_set, ids, frame)
        for agent_index, agent in enumerate(EVAL_AGENTS):
            for run in range(EVAL_RUNS):
                _eval_run(rng, evals, golden_set, golden_ids, agent_index, agent, run, set_index, ids, frame)
    return evals


def _golden_sessions(
    rng: np.random.Generator,
    evals: Evals,
    set_index: int,
    golden_set: GoldenSet,
    ids: Workspace,
    frame: TimeFrame,
) -> list[str]:
    tenant = golden_set.tenant
    golden_ids = uuid4_list(rng, GOLDEN_PER_SET)
    entities = ids.entities[tenant]
    for g, golden_id in enumerate(golden_ids):
        created = frame.days_ago_us(160 - 3 * g - set_index) + int(rng.integers(9 * HOUR_US, 18 * HOUR_US))
        promoted = created + int(rng.integers(1, 5)) * DAY_US + int(rng.integers(0, HOUR_US))
        snapshot = {
            "agent_id": ids.eval_agents[tenant]["baseline"],
            "initial_message": GOLDEN_MESSAGES[(g + set_index) % len(GOLDEN_MESSAGES)],
            "entity_id": entities[(g * 7 + set_index) % len(entities)] if g % 3 else None,
            "view_context": {"page": ("deal", "chat", "contacts")[set_index], "tab": "overview"},
            "tool_grants": [["crm", "sec"], ["crm"], ["crm", "web"]][set_index],
        }
        golden = {
            "set": golden_set.name,
            "promoted_at": iso(promoted),
            "promoted_by": ids.users[tenant][g % 2],
            "snapshot": snapshot,
        }
        evals.golden.append(
            {
                "id": golden_id,
                "tenant_id": ids.tenant_ids[tenant],
                "agent_id": ids.eval_agents[tenant]["baseline"],
                "session_type": golden_set.session_type,
                "status": "completed",
                "created_at": created,
                "completed_at": created + int(rng.integers(40, 400)) * SECOND_US,
                "metadata": compact_json({"golden": golden}),
            }
        )
    return golden_ids


def _cell_passes(set_name: str, golden_index: int, agent: str, run: int) -> bool:
    return CELL_PATTERNS.get((set_name, golden_index, agent), "P" * EVAL_RUNS)[run] == "P"


def _eval_result(
    rng: np.random.Generator, golden_set: GoldenSet, passed: bool, agent_index: int, run: int
) -> tuple[dict[str, object], list[dict[str, str]]]:
    """Per-dimension results; a replay passes when every dimension passed."""
    dims = golden_set.dimensions
    failing: set[int] = set()
    if not passed:
        failing = {int(i) for i in rng.choice(len(dims), size=int(rng.integers(1, 3)), replace=False)}
    dimensions: dict[str, object] = {}
    divergences: list[dict[str, str]] = []
    scores = []
    for index, name in enumerate(dims):
        if index in failing:
            score = round(float(rng.uniform(0.25, 0.7)), 3)
            expected, actual = DIVERGENCE_VALUES[name]
            divergences.append({"dimension": name, "severity": "major", "expected": expected, "actual": actual})
        else:
            drift = 0.004 * run if agent_index == 1 else 0.0
            score = round(min(float(rng.uniform(0.86, 0.99)) + drift, 1.0), 3)
        scores.append(score)
        dimensions[name] = {"passed": index not in failing, "score": score}
    result = {
        "session_type": golden_set.session_type,
        "dimensions": dimensions,
        "overall_accuracy": round(sum(scores) / len(scores), 3),
        "divergences": divergences,
    }
    return result, divergences


def _eval_run(
    rng: np.random.Generator,
    evals: Evals,
    golden_set: GoldenSet,
    golden_ids: list[str],
    agent_index: int,
    agent: str,
    run: int,
    set_index: int,
    ids: Workspace,
    frame: TimeFrame,
) -> None:
    """One weekly run of one agent config over one golden set: replays plus the run row."""
    tenant = golden_set.tenant
    agent_id = ids.eval_agents[tenant][agent]
    run_id = uuid4_list(rng, 1)[0]
    weeks_ago = EVAL_RUNS - 1 - run
    started = (
        frame.days_ago_us(1 + 7 * weeks_ago) + 2 * HOUR_US + set_index * 20 * MINUTE_US
        + agent_index * 6 * MINUTE_US
    )  # fmt: skip
    triggered_by = "post-deploy" if run == 4 else "manual" if (run, agent) == (7, EVAL_AGENTS[1]) else "scheduled"
    replay_ids = uuid4_list(rng, len(golden_ids))
    by_session: dict[str, object] = {}
    passed_count = 0
    completed = started
    for g, (golden_id, replay_id) in enumerate(zip(golden_ids, replay_ids, strict=True)):
        passed = _cell_passes(golden_set.name, g, agent, run)
        result, divergences = _eval_result(rng, golden_set, passed, agent_index, run)
        created = started + g * 45 * SECOND_US + int(rng.integers(0, SECOND_US))
        completed = created + int(rng.integers(20, 90)) * SECOND_US
        evals.replays.append(
            {
                "id": replay_id,
                "tenant_id": ids.tenant_ids[tenant],
                "agent_id": agent_id,
                "session_type": golden_set.session_type,
                "status": "completed",
                "created_at": created,
                "completed_at": completed,
                "metadata": compact_json({"eval_source": golden_id, "eval_run_id": run_id, "eval_result": result}),
            }
        )
        by_session[golden_id] = {
            "replay_session_id": replay_id,
            "passed": passed,
            "overall_accuracy": result["overall_accuracy"],
            "divergences": divergences,
        }
        passed_count += passed
        if not passed:
            evals.failed.append(
                FailedReplay(
                    tenant,
                    agent_id,
                    golden_id,
                    replay_id,
                    completed,
                    tuple(d["dimension"] for d in divergences),
                )  # fmt: skip
            )
    evals.runs.append(
        {
            "id": run_id,
            "tenant_id": ids.tenant_ids[tenant],
            "name": f"golden-{golden_set.name}-{iso(started)[:10]}-{agent}",
            "set_name": golden_set.name,
            "agent_id": agent_id,
            "triggered_by": triggered_by,
            "started_at": started,
            "completed_at": completed + 3 * SECOND_US,
            "golden_session_count": len(golden_ids),
            "passed_count": passed_count,
            "failed_count": len(golden_ids) - passed_count,
            "results": compact_json({"agent_config": agent, "bySession": by_session}),
            "created_by": None if triggered_by == "scheduled" else ids.users[tenant][0],
        }
    )
