"""What a list operation shows a user: gated like the table says, then filtered item by item.

The reference's list rows read "the owner … can see all the X, others can see the X
which they can load": a listing is allowed when its container can be reached, and
each item is shown only if the operation named by ``Operation.lists`` allows it.

A listing costs what it shows, not the estate:

- objects are listed from their container's registered children (``Model.kids``), and
  the requirement is read once against the path they share (the load_catalog and
  load_schema gates of a schema's tables, owners and grants above them), leaving per
  child a look at its owner and, when it carries grants of its own, at them
  (``Evaluator.allowed_children``);
- users, groups and roles are listed from the requirement of their get operation, read
  as the reference's sentence: when a term that does not depend on the item holds (the
  metalake's owner, MANAGE_USERS on the metalake, ...), every item is shown; otherwise
  only the items some term can pick (the user himself, his groups, the roles he holds
  or owns, roles carrying a grant to him) are candidates, each checked like any other.

Both give exactly the answer of checking every item of the inventory one by one
(``tests/decide/test_listing.py`` holds them equal on random models).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from pushdown.decide.evaluator import Evaluator, Target, operation_named, privilege_allowed, resolve_target
from pushdown.decide.requirements import (
    OPERATIONS,
    AnyOf,
    Has,
    Himself,
    HoldsRole,
    MemberOf,
    Operation,
    Owner,
)
from pushdown.errors import ModelError
from pushdown.model.privileges import Condition
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model

_ROLE = SecurableType.ROLE


def visible(evaluator: Evaluator, user: str, list_op: str, container: Target) -> list[Target]:
    """The items ``list_op`` on ``container`` shows ``user``; empty when the listing is denied."""
    op = operation_named(list_op)
    if op.lists is None or op.lists not in OPERATIONS:
        raise ModelError(
            f"{op.name} is not a listing pushdown can filter (tag and policy links are not held)"
        )
    target = resolve_target(op, container)
    if not evaluator.authorize(user, op.name, target, explain=False):
        return []
    item_op = OPERATIONS[op.lists]
    if item_op.target in ("user", "group") or item_op.target is _ROLE:
        shown = _principals(evaluator, user, item_op)
        if shown is not None:
            return shown
    kind = item_op.target
    if isinstance(kind, SecurableType) and kind is not _ROLE:
        root = target if isinstance(target, ObjectRef) else METALAKE
        if kind.depth == root.type.depth + 1:  # every object listing of the table: the root's children
            children = {o for o in evaluator.model.kids.get(root, ()) if o.type is kind}
            objects = evaluator.allowed_children(user, item_op.name, root, children)
            objects.sort(key=_names)  # what is shown, sorted
            return cast("list[Target]", objects)  # a list of ObjectRefs, read only by the caller
    return evaluator.allowed_among(user, item_op.name, _candidates(evaluator.model, item_op, target))


# -- objects -------------------------------------------------------------------------------


def _candidates(model: Model, item_op: Operation, container: Target) -> list[Target]:
    """Every item of ``item_op``'s kind in ``container``, in name order (before any check)."""
    kind = item_op.target
    if kind == "user":
        return sorted(model.users)
    if kind == "group":
        return sorted(model.groups)
    if kind is _ROLE:
        return [ObjectRef(_ROLE, (r,)) for r in sorted(model.roles)]
    if not isinstance(kind, SecurableType):
        raise ModelError(f"pushdown holds no inventory for {item_op.name} listings")
    root = container if isinstance(container, ObjectRef) else METALAKE
    objects = sorted(_objects_within(model, kind, root), key=_names)
    return cast("list[Target]", objects)  # a list of ObjectRefs, read only by the caller


def _objects_within(model: Model, kind: SecurableType, root: ObjectRef) -> Iterable[ObjectRef]:
    """The registered objects of ``kind`` whose path holds ``root``."""
    if root.type is kind:
        return [root] if root in model.objects else []
    gap = kind.depth - root.type.depth
    if gap <= 0:  # a path holds one node per depth: nothing of this kind lies below root
        return []
    if gap == 1:
        return [o for o in model.kids.get(root, ()) if o.type is kind]
    return [o for o in model.within(root) if o.type is kind]


def _names(obj: ObjectRef) -> tuple[str, ...]:
    return obj.names  # one kind per listing: name order is ObjectRef order


# -- users, groups, roles ------------------------------------------------------------------


def _principals(evaluator: Evaluator, user: str, item_op: Operation) -> list[Target] | None:
    """The users, groups or roles ``item_op`` lets ``user`` see, from the terms of its
    requirement; None when a term is not one read here (then every item is checked)."""
    model = evaluator.model
    requirement = item_op.requires
    terms = requirement.terms if isinstance(requirement, AnyOf) else (requirement,)
    by_name = item_op.target in ("user", "group")  # Has and Owner then look at the metalake
    everyone = False
    picked: set[str] = set()
    granted: list[Has] = []  # Has terms on roles: they depend on the role's own grants
    for term in terms:
        if isinstance(term, (Has, Owner)) and term.on != "target":
            return None
        if isinstance(term, Has) and by_name:
            everyone = everyone or evaluator.holds(user, term, user)
        elif isinstance(term, Has):
            granted.append(term)
        elif isinstance(term, Owner) and by_name:
            everyone = everyone or evaluator.holds(user, term, user)
        elif isinstance(term, Owner):
            levels = term.levels or (_ROLE,)
            if any(t not in (SecurableType.METALAKE, _ROLE) for t in levels):
                return None
            if SecurableType.METALAKE in levels:
                everyone = everyone or model.owners.get(METALAKE) == user
            if _ROLE in levels:
                picked.update(o.names[0] for o in model.owned_by.get(user, ()) if o.type is _ROLE)
        elif isinstance(term, Himself) and item_op.target == "user":
            picked.add(user)
        elif isinstance(term, MemberOf) and item_op.target == "group":
            picked.update(model.user_groups.get(user, ()))
        elif isinstance(term, HoldsRole) and item_op.target is _ROLE:
            picked.update(evaluator.roles_of(user))
        else:
            return None
    inventory: Iterable[str] = model.roles
    if by_name:
        inventory = model.users if item_op.target == "user" else model.groups
    if everyone:
        return _as_items(item_op, sorted(inventory))
    if granted and _granted_at_metalake(evaluator, user, granted):
        return _roles_granted_broadly(evaluator, user, item_op, picked)
    for term in granted:
        picked.update(_roles_granted_to(evaluator, user, term))
    candidates = sorted(n for n in picked if n in inventory)
    return evaluator.allowed_among(user, item_op.name, _as_items(item_op, candidates))


def _as_items(item_op: Operation, names: list[str]) -> list[Target]:
    if item_op.target is _ROLE:
        return [ObjectRef(_ROLE, (n,)) for n in names]
    return list(names)


def _granted_at_metalake(evaluator: Evaluator, user: str, terms: list[Has]) -> bool:
    """Whether one of the terms' privileges is effectively the user's on the metalake."""
    model, roles = evaluator.model, evaluator.roles_of(user)
    return any(privilege_allowed(model, roles, METALAKE, p) for term in terms for p in term.privileges)


def _roles_granted_broadly(
    evaluator: Evaluator, user: str, item_op: Operation, picked: set[str]
) -> list[Target]:
    """Every role, when a Has term holds on the metalake: a role is shown unless a grant
    on the role itself could take it away (then it is checked)."""
    by_object = evaluator.model.by_object
    shown: list[Target] = []
    for name in sorted(evaluator.model.roles):
        ref = ObjectRef(_ROLE, (name,))
        if name in picked or by_object.get(ref) is None or evaluator.allowed_among(user, item_op.name, [ref]):
            shown.append(ref)
    return shown


def _roles_granted_to(evaluator: Evaluator, user: str, term: Has) -> set[str]:
    """Roles on which a role the user holds is granted one of the term's privileges."""
    model = evaluator.model
    wanted = set(term.privileges)
    return {
        g.object.names[0]
        for held in evaluator.roles_of(user)
        for g in model.roles.get(held, ())
        if g.object.type is _ROLE and g.privilege in wanted and g.condition is Condition.ALLOW
    }
