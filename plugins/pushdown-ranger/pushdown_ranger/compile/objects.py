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
    """Objects below ``catalogs`` that a grant or an owner names (registered or not), found
    by key (the model's marks), never by a pass over every grant."""
    return [
        o
        for c in dict.fromkeys(catalogs)
        for o in model.marked_within(ObjectRef(T.CATALOG, (c,)))
        if o.type in DATA_TYPES and len(o.names) >= 2
    ]


def holds_tables(model: Model, catalog: str) -> bool:
    """Whether ``catalog`` holds a table: a registered one, or one a grant names (the first
    found ends the search)."""
    root = ObjectRef(T.CATALOG, (catalog,))
    if any(o.type is T.TABLE and o in model.by_object for o in model.marked_within(root)):
        return True
    return any(t.type is T.TABLE for s in model.children(root) for t in model.children(s))


def held_objects(model: Model, roots: list[ObjectRef], focus: frozenset[ObjectRef] | None) -> Inventory:
    """Everything below ``roots``, or with a focus: the catalogs and their schemas, and the
    objects below the focus's schemas and below schemas holding topics or filesets (those
    are compiled every time)."""
    if focus is None:
        named = named_objects(model, (r.names[0] for r in roots))
        return Inventory.of([*(o for root in roots for o in model.within(root)), *named])
    return held_in_focus(model, roots, focus)[0]


def held_in_focus(
    model: Model, roots: list[ObjectRef], focus: frozenset[ObjectRef]
) -> tuple[Inventory, frozenset[ObjectRef]]:
    """:func:`held_objects` of a focus, and the topics and filesets it holds: found as they
    are added (a schema's registered ones in the model's index of them, ``Model.leaves``),
    not by a walk over the inventory. A schema's registered children are added at once."""
    held = Inventory.of(roots)
    leaves: set[ObjectRef] = set()
    wanted = {r.names[0] for r in roots}
    for schema in focus:  # by key: the focus's schemas, registered or only named
        if schema.names[0] in wanted:
            kids = set(model.children(schema))
            marked = model.marked_within(schema)
            if not (kids or marked or schema in model.objects):
                continue  # a schema dropped is no more held than in a whole compile
            held.add(schema)
            held.add_children(schema, kids)
            leaves.update(model.leaves.get(schema, ()))
            for obj in marked:
                held.add(obj)
                if obj.type in _LEAVES:
                    leaves.add(obj)
    for schema in leaf_schemas(model, roots):  # topics and filesets are compiled every time
        if schema not in focus:
            held.add(schema)
            held.add_children(schema, model.children(schema))
            leaves.update(model.leaves.get(schema, ()))
    for root in roots:  # by key: the catalog's topics and filesets a grant or owner names
        for obj in model.marked_leaves.get(root.names[0], _NO_KIDS):
            held.add(obj)
            leaves.add(obj)
    return held, frozenset(leaves)


def leaf_schemas(model: Model, roots: Iterable[ObjectRef]) -> frozenset[ObjectRef]:
    """The schemas below ``roots`` registering a topic or a fileset, by key (the model's
    index of them, :attr:`Model.leaves`): no look at the catalogs' other schemas."""
    below = {root: model.kids.get(root, _NO_KIDS) for root in roots}
    return frozenset(
        schema
        for schema in model.leaves
        if (kids := below.get(schema.parent)) is not None  # type: ignore[arg-type]
        and schema in kids
    )


_NO_KIDS: frozenset[ObjectRef] = frozenset()


def with_case_twins(
    model: Model, roots: list[ObjectRef], focus: frozenset[ObjectRef]
) -> frozenset[ObjectRef]:
    """``focus`` and every schema equal to one of it but for case: Ranger's Hive resources
    ignore case, so a change to ``c.S1`` may change what ``c.s1``'s database gets.

    The candidates are the catalogs' registered schemas and the schemas of the objects a
    grant or an owner names there. When every focus's schema name is its own case fold,
    they are found by key (:attr:`Model.folds`: every other spelling of it; the name itself
    by :attr:`Model.kids` and :attr:`Model.marks`), else by a look at all of them."""
    folded = {(s.names[0], s.names[1].casefold()) for s in focus if len(s.names) >= 2}
    catalogs = [r for r in roots if any(c == r.names[0] for c, _ in folded)]
    if not catalogs:
        return focus
    if all(s.names[1] == s.names[1].casefold() for s in focus if len(s.names) >= 2):
        return focus | _twins_by_key(model, catalogs, folded)
    candidates = [s.names for root in catalogs for s in model.children(root)]
    candidates += [o.names[:2] for o in named_objects(model, (r.names[0] for r in catalogs))]
    twins = {ObjectRef(T.SCHEMA, n) for n in candidates if (n[0], n[1].casefold()) in folded}
    return focus | frozenset(twins)


def _twins_by_key(
    model: Model, catalogs: list[ObjectRef], folded: set[tuple[str, str]]
) -> frozenset[ObjectRef]:
    """:func:`with_case_twins`'s twins when every folded name is the focus's own spelling:
    a spelling other than it is not its own case fold, so it is in :attr:`Model.folds`."""
    twins: set[ObjectRef] = set()
    for root in catalogs:
        catalog = root.names[0]
        kids = model.kids.get(root, _NO_KIDS)
        for c, name in folded:
            if c != catalog:
                continue
            itself = ObjectRef(T.SCHEMA, (c, name))
            if itself in kids or model.marks.get(itself):
                twins.add(itself)
            for obj in model.folds.get(itself, _NO_KIDS):
                if obj in kids:
                    twins.add(ObjectRef(T.SCHEMA, obj.names))
                if obj.type in DATA_TYPES and (obj in model.by_object or obj in model.owners):
                    twins.add(ObjectRef(T.SCHEMA, obj.names[:2]))
    return frozenset(twins)
