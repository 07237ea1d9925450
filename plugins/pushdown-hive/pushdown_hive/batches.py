"""Send a plan to the metastore in the fewest calls: many privileges per
``grant_privileges`` / ``revoke_privileges`` call (a ``PrivilegeBag``); roles and
memberships one per call (the API has no batch for them).

The metastore runs one call in one transaction: a privilege it refuses (it is already
granted by somebody else, its table was dropped meanwhile) rolls the whole call back.
So a refused batch is split in halves until the refused privileges stand alone; the
rest still goes through, and each refusal is reported with the metastore's words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pushdown.reconcile.backend import Failure
from pushdown.reconcile.plan import Fact, Op
from pushdown_hive.facts import ROLE, HiveGrant, HiveHeld, HiveMember
from pushdown_hive.metastore import Refused

#: Privileges per call by default (the setting ``batch_size``).
BATCH = 5000


@dataclass
class Sent:
    """What one direction (grants or revokes) of an apply did."""

    done: int = 0
    calls: int = 0
    refused: list[tuple[Op, str]] = field(default_factory=list)


def chunks(ops: Sequence[Op], size: int) -> list[Sequence[Op]]:
    return [ops[i : i + size] for i in range(0, len(ops), max(1, size))]


def send(ops: Sequence[Op], call: Callable[[list[Any]], None], sent: Sent) -> None:
    """One call for ``ops``; on a refusal, each half again (a lone refusal is recorded)."""
    sent.calls += 1
    try:
        call([op.fact for op in ops])
    except Refused as exc:
        if len(ops) == 1:
            sent.refused.append((ops[0], str(exc)))
            return
        half = len(ops) // 2
        send(ops[:half], call, sent)
        send(ops[half:], call, sent)
        return
    sent.done += len(ops)


def roles_of(fact: Fact) -> set[str]:
    """The metastore roles an operation changes (what they carry or who holds them)."""
    if isinstance(fact, HiveMember):
        return {fact.role}
    if isinstance(fact, HiveHeld):
        return {fact.role} | ({fact.principal} if fact.principal_type == ROLE else set())
    if isinstance(fact, HiveGrant) and fact.principal_type == ROLE:
        return {fact.principal}
    return set()


def not_widening(ops: list[Op], refused: list[tuple[Op, str]]) -> tuple[list[Op], list[Failure]]:
    """Hold back the grants to, and of, a role whose revoke the metastore refused.

    The plan revokes from a role what one of its (new) holders may not have, or revokes
    the role from a holder who may not have what it is about to carry: when that revoke
    is refused, granting the role or its privileges would give a holder more than the
    model does. They are not sent (narrower); the next sync tries again."""
    stuck = {role for op, _ in refused if op.action == "remove" for role in roles_of(op.fact)}
    if not stuck:
        return ops, []
    send, held = [], []
    for op in ops:
        role = next(iter(sorted(roles_of(op.fact) & stuck)), None)
        if role is not None:
            held.append(
                Failure(
                    (op,),
                    f"not sent: {op.fact} (a revoke on role {role} was refused; granting "
                    "this could give a holder more than the model does)",
                )
            )
        else:
            send.append(op)
    return send, held


def refusal(op: Op, words: str) -> str:
    """The metastore's words, and what its opaque "internal error" usually means."""
    doing = "grant" if op.action != "remove" else "revoke"
    hint = ""
    if "internal error" in words.lower():
        what = "it already holds (whoever granted it)" if doing == "grant" else "it does not hold"
        hint = (
            f" (the metastore answers a {doing} of a privilege {what}, or one on an object dropped "
            "meanwhile, with this error; check the object and sync again)"
        )
    return f"the metastore refused to {doing} {op.fact}: {words}{hint}"
