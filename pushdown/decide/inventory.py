"""The objects a backend's server holds, in model names, as a tree.

The entitlement compiler decides over an inventory rather than over the model's own
object registry: a server may hold tables the model never heard of, and they are
governed by the grants on their schema and catalog all the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from pushdown.model.securables import METALAKE, ObjectRef, SecurableType

#: A name segment no model object can carry (control characters are refused in names):
#: the stand-in for "any object below here that carries nothing of its own".
GENERIC = "\x00any"


def generic_child(parent: ObjectRef, type_: SecurableType) -> ObjectRef:
    """A stand-in object of ``type_`` below ``parent`` with no grant and no owner of its own."""
    names = parent.names
    while len(names) < type_.depth:
        names = (*names, GENERIC)
    return ObjectRef(type_, names)


@dataclass
class Inventory:
    """Objects by parent; every ancestor of a member is a member too (the metalake always)."""

    kids: dict[ObjectRef, set[ObjectRef]] = field(default_factory=dict)
    _generic: dict[tuple[ObjectRef, SecurableType], ObjectRef] = field(default_factory=dict, repr=False)

    def generic(self, parent: ObjectRef, type_: SecurableType) -> ObjectRef:
        """:func:`generic_child`, made once per (parent, type)."""
        key = (parent, type_)
        hit = self._generic.get(key)
        if hit is None:
            hit = self._generic[key] = generic_child(parent, type_)
        return hit

    @classmethod
    def of(cls, objects: Iterable[ObjectRef]) -> Inventory:
        inv = cls()
        for obj in objects:
            inv.add(obj)
        return inv

    def add(self, obj: ObjectRef) -> None:
        node = obj
        while node.parent is not None:
            siblings = self.kids.setdefault(node.parent, set())
            if node in siblings:
                return
            siblings.add(node)
            node = node.parent

    def add_children(self, parent: ObjectRef, kids: Iterable[ObjectRef]) -> None:
        """:meth:`add` of each of ``kids``, every one a child of ``parent``, which is held
        already: one set update (a schema's thousand tables), not a walk up from each."""
        assert parent in self, parent
        kids = set(kids)
        if kids:
            self.kids.setdefault(parent, set()).update(kids)

    def __contains__(self, obj: object) -> bool:
        if obj is METALAKE:
            return True
        parent = getattr(obj, "parent", None)
        if parent is None:  # the metalake of a copied model is an equal ref, not the same one
            return bool(obj == METALAKE)
        return obj in self.kids.get(parent, ())

    def children(self, obj: ObjectRef) -> set[ObjectRef]:
        return self.kids.get(obj, _EMPTY)

    def within(self, root: ObjectRef) -> Iterator[ObjectRef]:
        """``root`` (when held) and every held object below it."""
        if root in self:
            yield root
        todo = [root]
        while todo:
            for kid in self.kids.get(todo.pop(), ()):
                yield kid
                todo.append(kid)

    def __len__(self) -> int:
        return sum(len(k) for k in self.kids.values())


_EMPTY: set[ObjectRef] = set()
