"""What each view of the page shows, computed from the service and the core (no HTML here).

Every function takes the caller and answers only what the REST requirement table lets
the caller see: objects the caller may load, users the caller may list (a non-owner:
himself), roles the caller may list. An object or a user the caller may not see is
answered exactly like one that does not exist (:class:`Hidden`).

Who may do what on an object comes from the compiler (the same compact form the
backends and ``pushdown report`` read: classes of users that decide alike, and the
reasons of :class:`~pushdown.report.reasons.Reasoner`), scoped to the object's
container; a principal's rows are the report's own rows for that one user. Nothing
loops users x objects through the evaluator; the matrix checks exactly the cells asked
for, as the API would one by one.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from pushdown.app.service import AccessControl
from pushdown.decide.evaluator import Evaluator
from pushdown.decide.listing import visible
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import ModelError
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.report.operations import DEFAULT

PAGE = 50
#: the most cells one matrix asks the evaluator for
MAX_CELLS = 2000


class Hidden(Exception):
    """Not there, or not the caller's to see: both answered alike."""


def by_type() -> dict[SecurableType, tuple[str, ...]]:
    out: dict[SecurableType, list[str]] = {}
    for op in DEFAULT:
        kind = OPERATIONS[op].target
        if isinstance(kind, SecurableType) and not op.startswith("create_"):  # on the object itself
            out.setdefault(kind, []).append(op)
    return {k: tuple(v) for k, v in out.items()}


OPS_BY_TYPE = by_type()
#: the operations the page shows: the report's default ones, each on its own object
PAGE_OPS = tuple(op for ops in OPS_BY_TYPE.values() for op in ops)


@dataclass
class Reader:
    """One caller's reading of the model (the decision model, as REST decides on)."""

    ac: AccessControl
    caller: str
    model: Model = field(init=False)
    evaluator: Evaluator = field(init=False)

    def __post_init__(self) -> None:
        self.model = self.ac.decision_model()
        self.evaluator = Evaluator(self.model)
        self._users: set[str] | None = None

    # -- what the caller may see --------------------------------------------------------

    @property
    def admin(self) -> bool:
        """The metalake's owner or a service admin: sees every backend and the whole journal."""
        admins = set(self.ac.access.service_admins) | self.model.service_admins
        return self.caller in admins or self.model.owners.get(METALAKE) == self.caller

    def users(self) -> set[str]:
        """The users the caller may see (REST's list_users: the owner all, others himself)."""
        if self._users is None:
            shown = visible(self.evaluator, self.caller, "list_users", METALAKE)
            self._users = {u for u in shown if isinstance(u, str)}
        return self._users

    def may_load(self, ref: ObjectRef) -> bool:
        if self.model.owners.get(METALAKE) == self.caller:  # the metalake's owner loads everything
            return True
        op = f"load_{ref.type.value}"
        if op not in OPERATIONS:
            return False
        return self.evaluator.authorize(self.caller, op, ref, explain=False).allowed

    def obj(self, name: str) -> ObjectRef:
        """The object named, once the caller may load it; :class:`Hidden` otherwise."""
        try:
            ref = ObjectRef.parse(name)
        except (ModelError, ValueError):
            raise Hidden(name) from None
        if ref.type is SecurableType.METALAKE or ref not in self.model.objects or not self.may_load(ref):
            raise Hidden(name)
        return ref

    def user(self, name: str) -> str:
        if name not in self.model.users or name not in self.users():
            raise Hidden(name)
        return name

    # -- search ---------------------------------------------------------------------------

    def search(self, text: str, limit: int = 20) -> list[str]:
        """Objects whose name holds ``text`` that the caller may load, in name order."""
        needle = text.strip().lower()
        if not needle:
            return []
        matches = [o for o in self.model.objects if needle in o.name.lower()]
        first = heapq.nsmallest(limit * 10, matches, key=_names)  # most callers see most of them
        found = [str(ref) for ref in first if self.may_load(ref)][:limit]
        if len(found) < limit and len(first) < len(matches):
            found = [str(ref) for ref in sorted(matches, key=_names) if self.may_load(ref)][:limit]
        return found

    def search_users(self, text: str, limit: int = 20) -> list[str]:
        needle = text.strip().lower()
        return sorted(u for u in self.users() if needle in u.lower())[:limit]


def _names(ref: ObjectRef) -> tuple[str, ...]:
    return ref.names
