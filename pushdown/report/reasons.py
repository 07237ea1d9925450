"""Why one kind of user may perform an operation on an object: the evidence, set-wise.

A :class:`Reasoner` stands beside one :class:`~pushdown.decide.decider.Decider` (users
holding the same roles, owning the same objects) and reads the same requirement term by
term, keeping what made each accepted alternative hold: the ALLOWs of a privilege the
term asks for (on the object or an ancestor, not beaten by a DENY of it), the owned
objects it accepts, service-admin status. Gates (``Can``: being able to load the
catalog, the schema) must hold but give no reason of their own. Reasons are kept per
(operation, object) like the decider's decisions, so the objects that decide like a
stand-in child share one answer.
"""

from __future__ import annotations

from pushdown.decide.decider import Decider
from pushdown.decide.requirements import OPERATIONS, AllOf, AnyOf, Can, Has, Owner, ServiceAdmin, Term
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.report.schema import GRANT, OWNER, SERVICE_ADMIN

#: (reason, role, privilege, source): role and privilege only for grants, source for grants and owners
Reason = tuple[str, str | None, str | None, ObjectRef | None]
_ADMIN: Reason = (SERVICE_ADMIN, None, None, None)


class Reasoner:
    """The reasons of one decider's ALLOWed decisions, memoised per (operation, object)."""

    def __init__(self, decider: Decider) -> None:
        self.decider = decider
        self._memo: dict[tuple[str, ObjectRef], tuple[Reason, ...]] = {}

    def reasons(self, operation: str, node: ObjectRef) -> tuple[Reason, ...]:
        """The evidence for ``operation`` on ``node``; empty when it is not allowed."""
        key = (operation, node)
        hit = self._memo.get(key)
        if hit is None:
            ok, found = self._term(OPERATIONS[operation].requires, node)
            if ok != self.decider.decide(operation, node):  # pragma: no cover - the two read one table
                raise AssertionError(f"reasons and decision disagree on {operation} {node}")
            hit = self._memo[key] = tuple(sorted(set(found), key=_order)) if ok else ()
        return hit

    def _term(self, term: Term, node: ObjectRef) -> tuple[bool, list[Reason]]:
        if isinstance(term, AllOf):
            found: list[Reason] = []
            for sub in term.terms:
                ok, more = self._term(sub, node)
                if not ok:
                    return False, []
                found += more
            return True, found
        if isinstance(term, AnyOf):
            parts = [self._term(sub, node) for sub in term.terms]
            return any(ok for ok, _ in parts), [r for ok, more in parts if ok for r in more]
        if isinstance(term, Has):
            found = self._grants(term, node)
            return bool(found), found
        if isinstance(term, Owner):
            owned = self._owned(term, node)
            return bool(owned), [(OWNER, None, None, o) for o in owned]
        if isinstance(term, Can):
            return self.decider.decide(term.operation, node.path[term.at.depth]), []
        if isinstance(term, ServiceAdmin):
            return self.decider.admin, [_ADMIN] if self.decider.admin else []
        return True, []  # InMetalake: the report speaks of the metalake's users only

    def _grants(self, term: Has, node: ObjectRef) -> list[Reason]:
        allowed, denied = self.decider.effective(node)
        roles = self.decider.roles
        by_object = self.decider.by_object
        found: list[Reason] = []
        for privilege in term.privileges:
            if privilege not in allowed or privilege in denied:
                continue
            for ancestor in node.path:
                holders = by_object.get(ancestor, {}).get(privilege, {}).get(Condition.ALLOW)
                if holders:
                    found += [(GRANT, r, privilege.value, ancestor) for r in holders if r in roles]
        return found

    def _owned(self, term: Owner, node: ObjectRef) -> list[ObjectRef]:
        owned = self.decider.owned
        if not owned:
            return []
        if not term.levels:
            return [node] if node in owned else []
        return [a for a in node.path if a.type in term.levels and a in owned]


def _order(reason: Reason) -> tuple[str, str, str, tuple[str, ...]]:
    kind, role, privilege, source = reason
    return (kind, role or "", privilege or "", () if source is None else source.names)
