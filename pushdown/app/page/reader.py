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
from typing import Any

from pushdown.app.service import AccessControl
from pushdown.decide.evaluator import Evaluator, Target, resolve_target
from pushdown.decide.listing import visible
from pushdown.decide.requirements import OPERATIONS, Operation
from pushdown.errors import ModelError
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.report.operations import DEFAULT

PAGE = 50
#: the most cells one matrix asks the evaluator for
MAX_CELLS = 2000


#: how ``Model.roles_of`` says a role is held through a group
THROUGH = "through group "
#: a role or a group the caller may not see, where a view would name it
HIDDEN_ROLE = "a role you may not see"
HIDDEN_GROUP = "through a group you may not see"


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
        self._seen: dict[tuple[str, str], bool] = {}
        #: what the views worked out for this caller, kept for the request
        self.memo: dict[Any, Any] = {}

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

    def _may(self, operation: str, name: str) -> bool:
        key = (operation, name)
        seen = self._seen.get(key)
        if seen is None:
            decision = self.evaluator.authorize(self.caller, operation, name, explain=False)
            seen = self._seen[key] = decision.allowed
        return seen

    # REST's rules for naming a principal or a role (one rule for both front ends): a user as
    # get_user (and list_users) shows him, a group as get_group, a role as get_role (which
    # list_roles and the roles of an object filter by), an object's owner as get_owner.

    def sees_user(self, name: str) -> bool:
        return name in self.users()

    def sees_group(self, name: str) -> bool:
        return self._may("get_group", name)

    def sees_role(self, name: str) -> bool:
        return self._may("get_role", name)

    def sees_principal(self, principal: Principal) -> bool:
        if principal.kind is PrincipalKind.USER:
            return self.sees_user(principal.name)
        if principal.kind is PrincipalKind.GROUP:
            return self.sees_group(principal.name)
        return self.sees_role(principal.name)

    def sees_owner(self, owner: str, node: ObjectRef) -> bool:
        """Whether the caller may be told that ``owner`` owns ``node``: he may see the user,
        or REST's get_owner on the node (which loads it) answers that name."""
        if self.sees_user(owner):
            return True
        return self.model.owners.get(node) == owner and self.may_load(node)

    def role_words(self, role: str | None) -> str:
        """``role NAME`` where a view names a role, if the caller may see it."""
        return f"role {role}" if role is not None and self.sees_role(role) else HIDDEN_ROLE

    def held_words(self, how: str) -> str:
        """How a role is held (``Model.roles_of``: directly, or through a group), the group
        named only if the caller may see it."""
        if how.startswith(THROUGH) and not self.sees_group(how.removeprefix(THROUGH)):
            return HIDDEN_GROUP
        return how

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
        return self.shown(ref)

    def shown(self, ref: ObjectRef) -> ObjectRef:
        """``ref``, once the caller may load it; :class:`Hidden` otherwise."""
        if ref.type is SecurableType.METALAKE or ref not in self.model.objects or not self.may_load(ref):
            raise Hidden(str(ref))
        return ref

    def user(self, name: str) -> str:
        if name not in self.model.users or name not in self.users():
            raise Hidden(name)
        return name

    def group(self, name: str) -> str:
        if name not in self.model.groups or not self.sees_group(name):
            raise Hidden(name)
        return name

    def role(self, name: str) -> ObjectRef:
        if name not in self.model.roles or not self.sees_role(name):
            raise Hidden(name)
        return ObjectRef(SecurableType.ROLE, (name,))

    def target(self, op: Operation, text: str) -> Target:
        """The operation's target named by ``text``, once the caller may see it (whatever
        the operation: a user, a group, a role, the metalake or any object); :class:`Hidden`
        otherwise, as for one that does not exist."""
        if op.target == "user":
            return self.user(text)
        if op.target == "group":
            return self.group(text)
        try:
            ref = resolve_target(op, text)
        except (ModelError, ValueError):
            raise Hidden(text) from None
        if not isinstance(ref, ObjectRef):
            raise Hidden(text)
        if ref.type is SecurableType.METALAKE:
            return METALAKE
        if ref.type is SecurableType.ROLE:
            return self.role(ref.names[0])
        return self.shown(ref)

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
