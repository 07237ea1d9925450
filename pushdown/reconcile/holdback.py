"""Holding back widening writes after a refused one, for a backend's ``apply``.

An error never holds back a narrowing, but a widening write that follows a refused one
may widen past a narrowing that did not happen: a role is granted to a new holder after
the revoke of what that holder may not have was refused. :class:`HoldBack` keeps what
was refused and says, for each widening write, whether it waits for the next sync.

What a refusal holds back is the backend's to say, through ``hangs_on`` (the keys a
write depends on; a refusal holds back the widening writes that share a key with it):

- the Hive Metastore keys by role: a refused revoke on role ``r`` holds back the grants
  to and of ``r`` (other roles' grants cannot widen through ``r``) and only revokes
  count, since a refused grant narrows nothing;
- Ranger keys every write alike (``EVERY``): its writes are whole policies and roles
  whose effects reach each other through role nesting and policy resources, so any
  refused write, narrowing or widening, holds back every widening write after it.

The two differ only in these keys and in which refusals count; the ledger, the decision
and the failure a held-back write becomes are the same, and live here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pushdown.reconcile.backend import Failure
from pushdown.reconcile.plan import Op

#: the one key of a backend whose every write depends on every other
EVERY = "every write"


def every(op: Op) -> frozenset[str]:
    """``hangs_on`` for a backend that holds back every widening write after a refusal."""
    return frozenset({EVERY})


@dataclass
class HoldBack:
    """Refusals seen so far in one apply, and the widening writes they hold back."""

    hangs_on: Callable[[Op], Iterable[str]] = every
    #: per key, the refused operation that blocks it (the first one)
    stuck: dict[str, Op] = field(default_factory=dict)

    def refused(self, op: Op) -> None:
        """Record that the server refused ``op`` (or did not answer)."""
        for key in sorted(self.hangs_on(op)):
            self.stuck.setdefault(key, op)

    def blocker(self, op: Op) -> str | None:
        """The key on which a refusal holds back ``op``'s widening write, or ``None``."""
        return next((k for k in sorted(self.hangs_on(op)) if k in self.stuck), None)

    def split(self, ops: Iterable[Op], why: Callable[[Op, str], str]) -> tuple[list[Op], list[Failure]]:
        """The widening ``ops`` still to send, and a failure (``why(op, key)``) for each
        one held back."""
        send: list[Op] = []
        held: list[Failure] = []
        for op in ops:
            key = self.blocker(op)
            if key is None:
                send.append(op)
            else:
                held.append(Failure((op,), why(op, key)))
        return send, held
