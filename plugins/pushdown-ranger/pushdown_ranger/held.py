"""What the compile looks at: every object the model registers below the enforced
catalogs, and every object a grant or an owner names there, registered or not. Pure.

The model accepts a grant (a DENY too) or an owner on an object nobody registered.
Ranger's every-table policy (``table=?*``) reaches such a table the moment it exists, so
the table must be in the compile's inventory: then it gets its own items (a deny item
under a DENY) like any registered table. Nothing the model names is left unenforced.
"""

from __future__ import annotations

from collections.abc import Iterable

from pushdown.decide.inventory import Inventory
from pushdown.model.securables import DATA_TYPES, ObjectRef, SecurableType
from pushdown.model.state import Model

T = SecurableType
_LEAVES = (T.TOPIC, T.FILESET)


def named_objects(model: Model, catalogs: Iterable[str]) -> list[ObjectRef]:
    """Objects below ``catalogs`` that a grant or an owner names (registered or not)."""
    wanted = set(catalogs)
    return [
        o
        for o in {*model.by_object, *model.owners}
        if o.type in DATA_TYPES and len(o.names) >= 2 and o.names[0] in wanted
    ]


def held_objects(model: Model, roots: list[ObjectRef], focus: frozenset[ObjectRef] | None) -> Inventory:
    """Everything below ``roots``, or with a focus: the catalogs and their schemas, and the
    objects below the focus's schemas and below schemas holding topics or filesets (those
    are compiled every time)."""
    named = named_objects(model, (r.names[0] for r in roots))
    if focus is None:
        return Inventory.of([*(o for root in roots for o in model.within(root)), *named])
    kids: dict[ObjectRef, set[ObjectRef]] = {}
    held = Inventory.of(roots)
    for root in roots:
        for schema in model.children(root):
            kids.setdefault(schema, set()).update(model.children(schema))
    for obj in named:
        above = obj.ancestor(T.SCHEMA)
        if above is not None:
            bucket = kids.setdefault(above, set())
            if obj != above:
                bucket.add(obj)
    for schema, below in kids.items():
        held.add(schema)
        if schema in focus or any(k.type in _LEAVES for k in below):
            for kid in below:
                held.add(kid)
    return held


def with_case_twins(
    model: Model, roots: list[ObjectRef], focus: frozenset[ObjectRef]
) -> frozenset[ObjectRef]:
    """``focus`` and every schema equal to one of it but for case: Ranger's Hive resources
    ignore case, so a change to ``c.S1`` may change what ``c.s1``'s database gets."""
    folded = {(s.names[0], s.names[1].casefold()) for s in focus if len(s.names) >= 2}
    catalogs = [r for r in roots if any(c == r.names[0] for c, _ in folded)]
    if not catalogs:
        return focus
    candidates: list[ObjectRef | None] = [s for root in catalogs for s in model.children(root)]
    candidates += [o.ancestor(T.SCHEMA) for o in named_objects(model, (r.names[0] for r in catalogs))]
    twins = {s for s in candidates if s is not None and (s.names[0], s.names[1].casefold()) in folded}
    return focus | frozenset(twins)
