"""Source 4, workspace sessions: the everyday agent sessions, and the identities every workspace row uses.

`ordinary_sessions` gives the rows of OUT/workspace/sessions.jsonl that are not about evals
(golden sessions and replays come from `demo.workspace_evals`; `demo.workspace` writes the file).
A row has the columns of the workspace sessions contract (`warehouse.contracts.WORKSPACE_SESSIONS`),
`metadata` a JSON object (`trigger`, `event_count`); a session still running at as_of has no
`completed_at`. Upstream: the agent workspace's PostgreSQL `sessions` table, exported as JSON lines.

Identities (`Workspace`): the tenant ids are not drawn, each is `demo_tenant_id` of the tenant's
name, the same for every seed; users, agents, eval agent configs and entities are drawn per tenant.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from demo.common import (
    HOUR_US,
    SECOND_US,
    TENANT_WEIGHTS,
    TENANTS,
    TimeFrame,
    arrow_schema,
    categorical,
    compact_json,
    demo_tenant_id,
    sample_times,
    timestamp_column,
    uuid4_list,
    uuid4s,
)
from warehouse.contracts import SESSION_TYPES, WORKSPACE_SESSIONS

SESSION_TYPE_WEIGHTS = (0.3, 0.4, 0.12, 0.12, 0.06)
SESSION_STATUSES = ("completed", "failed", "running", "cancelled")
SESSION_STATUS_WEIGHTS = (0.86, 0.07, 0.02, 0.05)
SESSION_TRIGGERS = ("ui", "api", "schedule", "heartbeat")
AGENT_NAMES = ("assistant", "extractor", "researcher", "ops-bot")
# The agent configs the evals compare; the baseline is each tenant's first agent.
EVAL_AGENTS = ("baseline", "candidate-prompt-v2", "candidate-model-swap")

SESSION_SCHEMA = arrow_schema(WORKSPACE_SESSIONS)


@dataclass(frozen=True)
class Workspace:
    """Stable identities of the workspace: tenants, users, agents."""

    tenant_ids: dict[str, str]
    users: dict[str, list[str]]  # the first two users of a tenant are its admins
    agents: dict[str, list[str]]  # one per AGENT_NAMES; the first is the eval baseline
    eval_agents: dict[str, dict[str, str]]  # tenant -> eval config label -> agent id
    review_agent: str
    entities: dict[str, list[str]]


def workspace_identities(rng: np.random.Generator) -> Workspace:
    tenant_ids = {tenant: demo_tenant_id(tenant) for tenant in TENANTS}
    # The tenant ids used to be drawn here: draw as many uuids still, so that every identity drawn
    # after them (users, agents, entities) stays what it was for a given seed.
    uuid4_list(rng, len(TENANTS))
    users = {tenant: uuid4_list(rng, 12) for tenant in TENANTS}
    agents = {tenant: uuid4_list(rng, len(AGENT_NAMES)) for tenant in TENANTS}
    eval_agents = {
        tenant: dict(zip(EVAL_AGENTS, [agents[tenant][0], *uuid4_list(rng, 2)], strict=True)) for tenant in TENANTS
    }
    return Workspace(
        tenant_ids=tenant_ids,
        users=users,
        agents=agents,
        eval_agents=eval_agents,
        review_agent=uuid4_list(rng, 1)[0],
        entities={tenant: uuid4_list(rng, 40) for tenant in TENANTS},
    )


def ordinary_sessions(
    rng: np.random.Generator, n: int, ids: Workspace, frame: TimeFrame
) -> tuple[pa.Table, np.ndarray]:
    """Everyday sessions and the tenant (index into TENANTS) of each."""
    tenants = list(TENANTS)
    tenant = categorical(rng, n, TENANT_WEIGHTS)
    created = sample_times(rng, n, frame, hour_mean=13.0)
    status = categorical(rng, n, SESSION_STATUS_WEIGHTS)
    duration = np.minimum(rng.lognormal(np.log(90.0), 1.0, n) * SECOND_US, 2 * HOUR_US)
    completed = created + duration.astype(np.int64)
    running = completed >= frame.end_us  # still running at as_of
    status = np.where(running, SESSION_STATUSES.index("running"), status)
    running |= status == SESSION_STATUSES.index("running")
    agent = rng.integers(0, len(AGENT_NAMES), n)
    trigger = categorical(rng, n, (0.6, 0.2, 0.12, 0.08))
    event_count = 2 + rng.geometric(0.08, n)
    metadata = [
        compact_json({"trigger": SESSION_TRIGGERS[t], "event_count": int(c)})
        for t, c in zip(trigger, event_count, strict=True)
    ]
    table = pa.table(
        {
            "id": uuid4s(rng, n).cast(pa.string()),
            "tenant_id": pa.array([ids.tenant_ids[tenants[t]] for t in tenant], pa.string()),
            "agent_id": pa.array([ids.agents[tenants[t]][a] for t, a in zip(tenant, agent, strict=True)], pa.string()),
            "session_type": pa.array([SESSION_TYPES[i] for i in categorical(rng, n, SESSION_TYPE_WEIGHTS)]),
            "status": pa.array([SESSION_STATUSES[s] for s in status], pa.string()),
            "created_at": timestamp_column(created),
            "completed_at": timestamp_column(completed, null=running),
            "metadata": pa.array(metadata, pa.string()),
        },
        schema=SESSION_SCHEMA,
    )
    return table, tenant
