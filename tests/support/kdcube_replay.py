"""A deterministic replay of reactions on the platform (tests/support/kdcube.py): users add, replace and clear
their reactions, the gate agent adds machine reactions (with a value or none, some below the threshold, which
the platform never writes), and every turn has its user, assistant and turn-log messages in the blob tree."""

from __future__ import annotations

import datetime as dt
import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.kdcube import Platform

TENANTS = (("acme-corp", "support"), ("globex", "docs qa"))  # schemas kdcube_acme_corp_support, kdcube_globex_docs_qa
USERS = ("alice@example.com", "bob", "carol")


@dataclass
class Replay:
    platforms: list[Platform]
    storage: Path
    start: dt.datetime
    end: dt.datetime
    conversations: list[tuple[Platform, str, str]] = field(default_factory=list)  # platform, user, conversation
    turns: dict[str, list[str]] = field(default_factory=dict)
    ops: dict[str, int] = field(default_factory=dict)  # counts per kind of operation
    cleared: list[tuple[Platform, str, str, str]] = field(default_factory=list)  # user reactions a clear removed
    # (conversation, turn) -> whether the user's last operation there was a clear after at least one reaction
    ends_cleared: dict[tuple[str, str], bool] = field(default_factory=dict)

    @property
    def blobs(self) -> int:
        return sum(len(p.written) for p in self.platforms)

    @property
    def reaction_blobs(self) -> int:
        return sum(1 for p in self.platforms for r in p.written if r["meta"].get("kind") == "turn.log.reaction")


def replay(dsn: str, storage: Path, *, seed: int = 7, reactions: int = 29, now: dt.datetime | None = None) -> Replay:
    """`reactions` reaction operations over the last 20 days before `now` (UTC), at least five of them clears
    of a standing not_ok and three machine reactions without a value."""
    rnd = random.Random(seed)
    now = now or dt.datetime.now(dt.UTC).replace(microsecond=0, tzinfo=None) - dt.timedelta(hours=1)
    clock = now - dt.timedelta(days=20)
    platforms = [Platform(dsn, storage, tenant, project, seed=seed + i) for i, (tenant, project) in enumerate(TENANTS)]
    run = Replay(platforms, storage, clock, now)
    for n in range(6):
        platform = platforms[n % 2]
        user = USERS[n % 3]
        conversation = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
        run.conversations.append((platform, user, conversation))
        run.turns[conversation] = []
        for t in range(3):
            turn = f"turn_{1760000000000 + n * 10 + t}_{rnd.choice('abcdefgh')}{t}"
            run.turns[conversation].append(turn)
            platform.write_turn(user=user, conversation_id=conversation, turn_id=turn, question=f"Q{n}.{t}", at=clock)
    standing: dict[tuple[str, str], str] = {}  # (conversation, turn) -> the user's standing reaction
    step = (now - clock) / (reactions + 2)
    # the plan: forced clears of a not_ok and null machine reactions first, then random operations
    plan = ["not_ok_then_clear"] * 5 + ["machine_null"] * 3 + ["machine_low"]
    while len(plan) < reactions:
        plan.append(rnd.choice(["user", "user", "user", "replace", "clear", "machine", "machine_null"]))
    rnd.shuffle(plan)
    for kind in plan:
        clock += step
        platform, user, conversation = rnd.choice(run.conversations)
        turn = rnd.choice(run.turns[conversation])
        key = (conversation, turn)
        run.ops[kind] = run.ops.get(kind, 0) + 1
        if kind == "not_ok_then_clear":
            platform.submit_turn_feedback(
                user=user,
                conversation_id=conversation,
                turn_id=turn,
                reaction="not_ok",
                text="wrong <b>answer</b>",
                at=clock,
            )
            platform.submit_turn_feedback(
                user=user, conversation_id=conversation, turn_id=turn, reaction=None, at=clock + step / 2
            )
            run.cleared.append((platform, user, conversation, turn))
            standing.pop(key, None)
            run.ends_cleared[key] = True
        elif kind == "clear":
            platform.submit_turn_feedback(
                user=user, conversation_id=conversation, turn_id=turn, reaction=None, at=clock
            )
            if standing.pop(key, None):
                run.cleared.append((platform, user, conversation, turn))
            run.ends_cleared[key] = key in run.ends_cleared  # a clear after some reaction (blobs keep that one)
        elif kind in ("user", "replace"):
            value = rnd.choice(["ok", "not_ok", "neutral"])
            platform.submit_turn_feedback(
                user=user,
                conversation_id=conversation,
                turn_id=turn,
                reaction=value,
                text='=HYPERLINK("x")' if value == "neutral" else "",
                at=clock,
            )
            standing[key] = value
            run.ends_cleared[key] = False
        elif kind == "machine":
            platform.handle_feedback(
                user=user,
                conversation_id=conversation,
                turn_id=turn,
                reaction=rnd.choice(["ok", "not_ok"]),
                confidence=0.85,
                text="user seems happy",
                at=clock,
            )
        elif kind == "machine_null":
            platform.handle_feedback(
                user=user,
                conversation_id=conversation,
                turn_id=turn,
                reaction=None,
                confidence=0.70,
                text="user commented",
                at=clock,
            )
        elif kind == "machine_low":
            platform.handle_feedback(
                user=user,
                conversation_id=conversation,
                turn_id=turn,
                reaction="ok",
                confidence=0.69,
                text="maybe",
                at=clock,
            )
    return run
