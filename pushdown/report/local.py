"""The report's rows, fanned out in this process from the compact form an engine computes
(the core's set-based compiler by default).

The compiler groups users into classes that decide alike in each catalog (and gives
the users who own something there a personal view of the owned subtrees). For each
class the objects are walked once, pruned like the compiler prunes (below a container
whose stand-in child is allowed nothing, only the children that carry something are
visited), and the allowed (object, operation, reason) entries are kept in their
written order. They are fanned out to the class's users only while writing: the full
expansion (users x entries) is never held, only one user's rows at a time.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from pushdown.decide.engine import LOCAL, Engine
from pushdown.decide.inventory import Inventory
from pushdown.decide.requirements import OPERATIONS
from pushdown.decide.views import OwnerView, View
from pushdown.model.securables import LEAF_TYPES, ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.report.reasons import Reasoner
from pushdown.report.schema import DIRECT, GROUP, Row

#: (object, object_type, operation, reason, role, privilege, source, source_type): a row
#: without its catalog, user, via and group, which the fan-out adds per user
Entry = tuple[str, str, str, str, str | None, str | None, str | None, str | None]
#: (reason, role, privilege, source, source_type): an entry's last columns
Tail = tuple[str, str | None, str | None, str | None, str | None]
Progress = Callable[[str], None]
BATCH = 10_000


@dataclass(frozen=True)
class Part:
    """One catalog's rows, as they reach the writer (sorted, batched)."""

    catalog: str
    batches: Iterator[list[Row]]


def local_rows(
    model: Model,
    operations: Sequence[str],
    inventory: Inventory | None = None,
    progress: Progress | None = None,
    compiler: Engine = LOCAL,
) -> Iterator[Part]:
    """Every catalog's rows, catalogs by name; within one, sorted by :func:`schema.sort_key`.

    ``compiler`` computes the compact form (the classes and their views): the core's
    set-based compiler by default, or another engine's (the ``spark`` plugin's runs the
    full compile as a DataFrame pipeline); the reasons and the fan-out are the same."""
    inventory = inventory if inventory is not None else Inventory.of(model.objects)
    ent = compiler.compile(model, tuple(dict.fromkeys(operations)), inventory)
    held = {u: model.roles_of(u) for u in ent.users}
    by_type = _by_type(ent.operations)
    for name in sorted(p for p in ent.classes if p):
        catalog = ObjectRef(SecurableType.CATALOG, (name,))
        if catalog not in inventory:
            continue
        fan = _Fanout(model, inventory, catalog, by_type, held)
        if progress is not None:
            progress(f"catalog {name}: {len(ent.classes[name])} class(es) of users")
        yield Part(name, fan.batches(ent.classes[name], ent.owners[name]))


def _by_type(operations: Iterable[str]) -> dict[SecurableType, tuple[str, ...]]:
    out: dict[SecurableType, list[str]] = {}
    for op in operations:
        kind = OPERATIONS[op].target
        assert isinstance(kind, SecurableType)
        out.setdefault(kind, []).append(op)
    return {k: tuple(sorted(v)) for k, v in out.items()}


class _Fanout:
    """One catalog: entries per class, then rows per user."""

    def __init__(
        self,
        model: Model,
        inventory: Inventory,
        catalog: ObjectRef,
        by_type: dict[SecurableType, tuple[str, ...]],
        held: dict[str, dict[str, str]],
    ) -> None:
        self.metalake = model.metalake
        self.inventory = inventory
        self.catalog = catalog
        self.by_type = by_type
        self.held = held
        self._memos: dict[int, tuple[View, Callable[[str, ObjectRef], list[Tail]]]] = {}

    def batches(
        self, classes: list[tuple[frozenset[str], View]], owners: dict[str, OwnerView]
    ) -> Iterator[list[Row]]:
        per_user: dict[str, tuple[View, list[Entry]]] = {}
        for users, view in classes:
            entries = list(self._entries(view, sorted(self._walk(view), key=_by_name)))
            for user in users:
                per_user[user] = (view, entries)
        batch: list[Row] = []
        for user in sorted(per_user):
            view, entries = per_user[user]
            mine = owners.get(user)
            if mine is not None:
                entries = self._personal(mine, entries)
            for row in self._rows(user, entries):
                batch.append(row)
                if len(batch) >= BATCH:
                    yield batch
                    batch = []
        if batch:
            yield batch

    def _rows(self, user: str, entries: list[Entry]) -> Iterator[Row]:
        name, roles = self.catalog.names[0], self.held[user]
        for entry in entries:
            role = entry[4]
            if role is None:
                yield (name, user, *entry, None, None)
                continue
            how = roles[role]
            if how == "directly":
                yield (name, user, *entry, DIRECT, None)
            else:
                yield (name, user, *entry, GROUP, how.removeprefix("through group "))

    def _personal(self, view: OwnerView, shared: list[Entry]) -> list[Entry]:
        """An owner's entries: the class's outside the owned region, the personal view's in it."""
        region = view.region
        inside = {o for o in region.above if o in self.inventory and self.catalog in o.path}
        for owned in region.owned:
            if owned in self.catalog.path:  # the metalake or the catalog: all of it
                inside.update(self.inventory.within(self.catalog))
            elif self.catalog in owned.path:
                inside.update(self.inventory.within(owned))
        names = {o.name for o in inside}
        kept = [e for e in shared if e[0] not in names]
        personal = self._entries(view.personal, sorted(inside, key=_by_name))
        return list(heapq.merge(kept, personal, key=_key))  # both in written order already

    def _walk(self, view: View) -> Iterator[ObjectRef]:
        """The catalog and every held object below it where something may be allowed."""
        yield self.catalog
        todo = [self.catalog]
        kids_of, above = self.inventory.children, view.keys.above
        while todo:
            node = todo.pop()
            kids = kids_of(node)
            if not kids:
                continue
            chosen = list(kids) if self._open(view, node) else [k for k in kids if k in above]
            yield from chosen
            todo += chosen

    def _open(self, view: View, node: ObjectRef) -> bool:
        """Whether anything below ``node`` that carries nothing of its own may be allowed."""
        rep, generic, decide = view.rep(node), self.inventory.generic, view.decider.decide
        below = (SecurableType.SCHEMA, *LEAF_TYPES) if node.type is SecurableType.CATALOG else LEAF_TYPES
        return any(decide(op, generic(rep, t)) for t in below for op in self.by_type.get(t, ()))

    def _entries(self, view: View, objects: Iterable[ObjectRef]) -> Iterator[Entry]:
        """The allowed (object, operation, reason) entries, in written order when ``objects``
        come sorted by :func:`_by_name` (operations and reasons are sorted here)."""
        tails = self._tails(view)
        for obj in objects:
            ops = self.by_type.get(obj.type)
            if not ops:
                continue
            target = obj
            if obj not in view.keys.nodes:
                assert obj.parent is not None
                target = self.inventory.generic(view.rep(obj.parent), obj.type)
            name, kind = obj.name, obj.type.value
            for op in ops:
                for tail in tails(op, target):
                    yield (name, kind, op, *tail)

    def _tails(self, view: View) -> Callable[[str, ObjectRef], list[Tail]]:
        """The reasons of ``view`` for (operation, object) as the row's last columns, sorted;
        kept per view, so every object that decides like one stand-in shares them."""
        hit = self._memos.get(id(view))
        if hit is not None and hit[0] is view:
            return hit[1]
        reasoner = Reasoner(view.decider)
        memo: dict[tuple[str, ObjectRef], list[Tail]] = {}
        metalake = self.metalake

        def tails(op: str, target: ObjectRef) -> list[Tail]:
            key = (op, target)
            found = memo.get(key)
            if found is None:
                found = []
                for kind, role, privilege, source in reasoner.reasons(op, target):
                    src = None if source is None else (source.name or metalake)
                    typ = None if source is None else source.type.value
                    found.append((kind, role, privilege, src, typ))
                found.sort(key=_key)
                memo[key] = found
            return found

        self._memos[id(view)] = (view, tails)
        return tails


def _key(entry: tuple[str | None, ...]) -> tuple[str, ...]:
    return tuple("" if v is None else v for v in entry)


def _by_name(obj: ObjectRef) -> tuple[str, str]:
    """Objects in written order: the ``object`` column, then ``object_type``."""
    return (obj.name, obj.type.value)
