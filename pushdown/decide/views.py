"""What the compiler hands a backend: per kind of user, decisions in compact form.

A :class:`View` answers for every user of one class (same roles where the compile
looks, same ownerships there). Its compact answer for a container is a
:class:`Coverage`: "every table of schema S except E" — the default covers the
children that carry nothing of their own, present and future, which is what lets a
backend emit one database-level grant where that is exact.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass

from pushdown.decide.decider import Decider
from pushdown.decide.inventory import Inventory
from pushdown.decide.requirements import OPERATIONS
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType


@dataclass(frozen=True)
class Coverage:
    """How one operation stands on the children (of its target type) of one container."""

    container: ObjectRef
    operation: str
    default: bool
    exceptions: frozenset[ObjectRef]

    def allowed(self, child: ObjectRef) -> bool:
        return self.default != (child in self.exceptions)

    @property
    def exact_container(self) -> bool:
        """Allowed on every child, present and future: a container-level grant is exact."""
        return self.default and not self.exceptions

    def members(self, inventory: Inventory) -> Iterator[ObjectRef]:
        """The held children the operation is allowed on."""
        kind = OPERATIONS[self.operation].target
        if not self.default:
            yield from (k for k in sorted(self.exceptions, key=_by_name) if k in inventory)
            return
        for child in sorted(inventory.children(self.container), key=_by_name):
            if child.type is kind and child not in self.exceptions:
                yield child


@dataclass
class Keys:
    """The objects that carry something of their own for one class, and their ancestors."""

    nodes: set[ObjectRef]
    kids: dict[ObjectRef, set[ObjectRef]]
    above: set[ObjectRef]

    @classmethod
    def of(cls, nodes: set[ObjectRef]) -> Keys:
        kids: dict[ObjectRef, set[ObjectRef]] = {}
        above: set[ObjectRef] = set()
        for node in nodes:
            if node.parent is not None:
                kids.setdefault(node.parent, set()).add(node)
            above.update(node.path)
        return cls(nodes, kids, above)


class View:
    """Decisions for one class of users over the inventory within the compile's roots."""

    def __init__(
        self,
        decider: Decider,
        keys: Keys,
        inventory: Inventory,
        starts: Collection[ObjectRef],
        operations: tuple[str, ...],
    ) -> None:
        self.decider = decider
        self.keys = keys
        self.inventory = inventory
        self.starts = starts
        self.operations = operations
        self._coverage: dict[tuple[str, ObjectRef], Coverage] = {}
        self._containers: dict[SecurableType, list[ObjectRef]] = {}

    def rep(self, node: ObjectRef) -> ObjectRef:
        """The deepest object on ``node``'s path that carries something for this class."""
        keyed = self.keys.nodes
        for ancestor in reversed(node.path):
            if ancestor in keyed:
                return ancestor
        return METALAKE

    def allowed(self, operation: str, obj: ObjectRef) -> bool:
        if obj in self.keys.nodes:
            return self.decider.decide(operation, obj)
        parent = obj.parent
        rep = self.rep(parent) if parent is not None else METALAKE
        return self.decider.decide(operation, self.inventory.generic(rep, obj.type))

    def coverage(self, operation: str, container: ObjectRef) -> Coverage:
        key = (operation, container)
        hit = self._coverage.get(key)
        if hit is None:
            hit = self._coverage[key] = self._cover(operation, container)
        return hit

    def _cover(self, operation: str, container: ObjectRef) -> Coverage:
        kind = OPERATIONS[operation].target
        assert isinstance(kind, SecurableType)
        decide = self.decider.decide
        default = decide(operation, self.inventory.generic(self.rep(container), kind))
        if container not in self.keys.kids:  # nothing below carries anything: no exception
            return Coverage(container, operation, default, _NO_EXCEPTIONS)
        odd = frozenset(
            k
            for k in self.keys.kids.get(container, ())
            if k.type is kind and k in self.inventory and decide(operation, k) != default
        )
        return Coverage(container, operation, default, odd)

    def containers(self, kind: SecurableType) -> list[ObjectRef]:
        """Held containers of ``kind`` in scope below which some operation may be allowed."""
        hit = self._containers.get(kind)
        if hit is None:
            hit = self._containers[kind] = sorted(self._walk(kind), key=_by_name)
        return hit

    def _walk(self, kind: SecurableType) -> Iterator[ObjectRef]:
        ops = [op for op in self.operations if _container_depth(op) == kind.depth]
        starts = {s if len(s.names) <= kind.depth else s.ancestor(kind) for s in self.starts}
        todo = [s for s in starts if s is not None and not any(a in starts for a in s.path[:-1])]
        while todo:
            node = todo.pop()
            if node.type is kind:
                if node in self.inventory:
                    yield node
                continue
            kids = self.inventory.children(node)
            if not kids or len(node.names) >= kind.depth:
                continue
            above = self.keys.above
            if self._open(ops, self.rep(node)):  # the kids that carry nothing are open too
                todo += kids
            else:
                todo += [kid for kid in kids if kid in above]

    def _open(self, ops: list[str], rep: ObjectRef) -> bool:
        """Whether anything that decides like a stand-in below ``rep`` is allowed."""
        decide, generic = self.decider.decide, self.inventory.generic
        return any(decide(op, generic(rep, _target(op))) for op in ops)


class Owned:
    """Where a user's ownership decides: the owned subtrees, and the paths down to them."""

    def __init__(self, owned: set[ObjectRef]) -> None:
        self.owned = owned
        self.above = {a for o in owned for a in o.path}

    def has(self, node: ObjectRef) -> bool:
        return node in self.above or any(n in self.owned for n in node.path)

    def has_parent_of(self, node: ObjectRef) -> bool:
        return node.parent is not None and self.has(node.parent)


class OwnerView(View):
    """A user who owns something in scope: a personal view there, the class view elsewhere."""

    def __init__(self, personal: View, shared: View, region: Owned) -> None:
        self.personal = personal
        self.shared = shared
        self.region = region

    def allowed(self, operation: str, obj: ObjectRef) -> bool:
        view = self.personal if self.region.has(obj) else self.shared
        return view.allowed(operation, obj)

    def coverage(self, operation: str, container: ObjectRef) -> Coverage:
        view = self.personal if self.region.has(container) else self.shared
        return view.coverage(operation, container)

    def containers(self, kind: SecurableType) -> list[ObjectRef]:
        mine = self.personal.containers(kind)
        theirs = [c for c in self.shared.containers(kind) if not self.region.has(c)]
        return sorted({*mine, *theirs}, key=_by_name)


class CompositeView(View):
    """One user's views, one per catalog and one for the metalake's own level (``""``)."""

    def __init__(self, parts: dict[str, View]) -> None:
        self.parts = parts

    def _part(self, obj: ObjectRef) -> View:
        if obj.names:
            hit = self.parts.get(obj.names[0])
            if hit is not None:
                return hit
        return self.parts.get("") or _NOBODY

    def allowed(self, operation: str, obj: ObjectRef) -> bool:
        return self._part(obj).allowed(operation, obj)

    def coverage(self, operation: str, container: ObjectRef) -> Coverage:
        return self._part(container).coverage(operation, container)

    def containers(self, kind: SecurableType) -> list[ObjectRef]:
        if kind is SecurableType.METALAKE:
            return self.parts[""].containers(kind) if "" in self.parts else []
        out: list[ObjectRef] = []
        for name, part in self.parts.items():
            if name:
                out += part.containers(kind)
        return out


class NoView(View):
    """A user the model does not know: allowed nothing."""

    def __init__(self) -> None:
        pass

    def allowed(self, operation: str, obj: ObjectRef) -> bool:
        return False

    def coverage(self, operation: str, container: ObjectRef) -> Coverage:
        return Coverage(container, operation, False, frozenset())

    def containers(self, kind: SecurableType) -> list[ObjectRef]:
        return []


_NOBODY = NoView()
_NO_EXCEPTIONS: frozenset[ObjectRef] = frozenset()


def _by_name(obj: ObjectRef) -> tuple[str, ...]:
    """A sort key compared in C (``ObjectRef``'s own ordering is a Python-level ``__lt__``)."""
    return obj.names


def _target(operation: str) -> SecurableType:
    kind = OPERATIONS[operation].target
    assert isinstance(kind, SecurableType)
    return kind


def _container_depth(operation: str) -> int:
    return _target(operation).depth - 1
