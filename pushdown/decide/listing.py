"""What a list operation shows a user: gated like the table says, then filtered item by item.

The reference's list rows read "the owner … can see all the X, others can see the X
which they can load": a listing is allowed when its container can be reached, and
each item is shown only if the operation named by ``Operation.lists`` allows it.
"""

from __future__ import annotations

from pushdown.decide.evaluator import Evaluator, Target, operation_named, resolve_target
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import ModelError
from pushdown.model.securables import ObjectRef, SecurableType


def _candidates(evaluator: Evaluator, item_op: str, container: Target) -> list[Target]:
    model = evaluator.model
    if item_op == "get_user":
        return sorted(model.users)
    if item_op == "get_group":
        return sorted(model.groups)
    if item_op == "get_role":
        return [ObjectRef.of("role", (r,)) for r in sorted(model.roles)]
    kind = OPERATIONS[item_op].target
    if not isinstance(kind, SecurableType):
        raise ModelError(f"pushdown holds no inventory for {item_op} listings")
    root = container if isinstance(container, ObjectRef) else None
    return sorted(o for o in model.objects if o.type is kind and (root is None or o.is_within(root)))


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
    candidates = _candidates(evaluator, op.lists, target)
    return [c for c in candidates if evaluator.authorize(user, op.lists, c, explain=False)]
