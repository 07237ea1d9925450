"""One request as a handler sees it: who asks, the path's names, the body, the model,
and the two ways to be refused.

- Reads are decided here, with the evaluator over the current model: :meth:`Call.check`
  refuses (403, ``ForbiddenException``; the failed checks go to the log, never to the
  caller: :func:`problems.refused`) and
  :meth:`Call.visible` filters a listing by the operation the requirement table names
  for each item (``Operation.lists``).
- Changes go through the core acting as the caller (:meth:`Call.acting`), which checks
  them against the same table before anything is written and records the author and
  this request's id.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pushdown.app.rest import problems, shapes
from pushdown.app.service import AccessControl
from pushdown.decide.evaluator import Evaluator, Target
from pushdown.decide.listing import visible
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import ExistsOnServer, Forbidden, ModelError, UnknownPrincipal
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model

log = logging.getLogger("pushdown.serve")


def shown_target(operation: str, target: str) -> str:
    """A refused target as a refusal names it: ``user bob``, ``role r``, ``table c.s.t``."""
    kind = OPERATIONS[operation].target
    return f"{kind} {target}" if kind in ("user", "group") else target


@dataclass
class Call:
    #: the core as the server holds it; handlers read through :attr:`ac`
    core: AccessControl
    user: str
    request_id: str
    params: Mapping[str, str]
    query: Mapping[str, str]
    raw_body: bytes = b""
    #: set when the handler asked the core to change something (the workers are woken)
    changed: bool = field(default=False, init=False)

    @cached_property
    def body(self) -> Any:
        return shapes.parse_json(self.raw_body)

    @cached_property
    def ac(self) -> AccessControl:
        """The core as this request reads it (:meth:`AccessControl.reader`): the store's
        position read once, at the first use (a request that reads nothing reads nothing),
        so every lookup of the request is as of one read, never older than any commit
        answered before the request arrived; a change through :meth:`acting` reads the store
        again, and what the request reads after it includes it."""
        return self.core.reader()

    @property
    def model(self) -> Model:
        return self.ac.model

    def acting(self) -> AccessControl:
        """The core acting as the caller: every change checked, then recorded with its author."""
        self.changed = True
        return self.core.acting(self.user, via="rest", request=self.request_id)

    # -- the served metalake ------------------------------------------------------------

    def service_admin(self) -> bool:
        return self.user in set(self.ac.access.service_admins) | self.model.service_admins

    def metalake(self) -> str:
        """The metalake the path names, once the caller is found to belong to it.

        Authorized before it is looked up: a caller who is neither a user of the served
        metalake nor a service admin gets the same refusal whether the named metalake
        exists or not; a service admin learns that it does not exist (404)."""
        wanted = self.params["metalake"]
        served = self.ac.metalake_name() == wanted
        member = self.user in self.ac.decision_model().users  # the directory's members too
        if not (served and member) and not self.service_admin():
            raise problems.refused(self.user, "use", f"metalake {wanted}")
        if not served:
            raise problems.not_found("NoSuchMetalakeException", f"metalake {wanted!r} does not exist")
        return wanted

    # -- decisions ----------------------------------------------------------------------

    def _evaluator(self) -> Evaluator:
        """Decides on the core's decision model: the directory's members included, as the
        backends enforce them."""
        return Evaluator(self.ac.decision_model())

    def may(self, operation: str, target: Target) -> bool:
        return self._evaluator().authorize(self.user, operation, target, explain=False).allowed

    def check(self, operation: str, target: Target) -> None:
        """Refuse (403) unless the caller may perform ``operation`` on ``target``. Decided
        without a trace; a refusal is decided again with one, for the log (and refused
        whatever that says)."""
        ev = self._evaluator()
        if ev.authorize(self.user, operation, target, explain=False).allowed:
            return
        decision = ev.authorize(self.user, operation, target)
        failed = [
            step.text for step in decision.trace if not step.ok and step.text not in ("all of:", "any of:")
        ]
        log.info(
            "request %s refused: %s may not %s %s: %s",
            self.request_id,
            self.user,
            decision.operation,
            decision.target,
            "; ".join(failed) or "not allowed",
            extra={"request": self.request_id},
        )
        raise problems.refused(self.user, decision.operation, shown_target(operation, decision.target))

    def visible(self, listing: str, items: Iterable[Target]) -> list[Target]:
        """The items of a listing the caller may see: the listing's per-item operation."""
        per_item = OPERATIONS[listing].lists
        assert per_item is not None, f"{listing} names no per-item operation"
        ev = self._evaluator()
        return [i for i in items if ev.authorize(self.user, per_item, i, explain=False).allowed]

    def listed(self, listing: str, container: Target = METALAKE) -> list[Target]:
        """What ``listing`` on ``container`` shows the caller, from the core's listing: it
        costs what it shows (the candidates come from the container's children, or from the
        caller's own roles and groups), and equals filtering every item by its operation."""
        return visible(self._evaluator(), self.user, listing, container)

    def audit(self, kind: str, name: str) -> dict[str, Any]:
        return shapes.audit(self.ac.audit(kind, name))


def object_exists(model: Model, ref: ObjectRef) -> bool:
    if ref == METALAKE:
        return True
    if ref.type is SecurableType.ROLE:
        return ref.names[0] in model.roles
    return ref in model.objects


def require_object(call: Call, ref: ObjectRef, metalake: str) -> None:
    """404 unless the object is registered (a role: created)."""
    if not object_exists(call.model, ref):
        then = "" if ref.type is SecurableType.ROLE else "; register it first"
        raise problems.not_found(
            "NoSuchMetadataObjectException",
            f"{ref.type.label} {shapes.full_name(ref, metalake)!r} does not exist{then}",
        )


def require_user(call: Call, user: str, doing: str) -> None:
    """404 unless the decision model holds ``user`` (as listed and read: the directory's
    members too); 400 for a member only the directory names, whom a change cannot hold
    (``doing``: what the caller asked) until the user is added."""
    if user not in call.ac.decision_model().users:
        raise problems.not_found("NoSuchUserException", f"user {user!r} does not exist")
    if user not in call.model.users:
        raise problems.bad_request(
            f"user {user!r} is a member only the directory names: add the user (POST .../users) "
            f"before {doing}"
        )


def created(
    call: Call, make: Callable[[], object], exists: Callable[[], bool], conflict: problems.Problem
) -> None:
    """Run a create; a refusal because the name is taken is a 409 (never a refusal to act),
    in the model or on a backend's server (Gravitino's answer for an object its catalog
    holds already)."""
    try:
        make()
    except Forbidden:
        raise
    except ExistsOnServer as exc:
        raise problems.already_exists(conflict.type, str(exc)) from None
    except ModelError:
        if exists():
            raise conflict from None
        raise


def removed(remove: Callable[[], object]) -> bool:
    """Run a remove; False when there was nothing to remove (Gravitino answers 200 false)."""
    try:
        remove()
    except Forbidden:
        raise
    except UnknownPrincipal:
        return False
    return True
