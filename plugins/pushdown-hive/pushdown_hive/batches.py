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

from pushdown.reconcile.plan import Op
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
