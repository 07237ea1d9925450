"""What one compile looks at: the roots' paths, the held objects below them, and the
roles with a grant anywhere there (only those can change a decision in the area)."""

from __future__ import annotations

from dataclasses import dataclass

from pushdown.decide.inventory import Inventory
from pushdown.model.securables import METALAKE, ObjectRef
from pushdown.model.state import Model


@dataclass
class Area:
    above: set[ObjectRef]
    role_nodes: dict[str, set[ObjectRef]]
    starts: frozenset[ObjectRef]
    inventory: Inventory
    inside: set[ObjectRef]

    @classmethod
    def of(
        cls, model: Model, inventory: Inventory, starts: set[ObjectRef], roles: frozenset[str] | None = None
    ) -> Area:
        """The area of ``starts``; the metalake alone means its own level (the catalogs).
        ``roles``: only these roles' nodes are noted (those of the users a compile decides
        for; a gate on the catalog names every role of the estate)."""
        above = {node for s in starts for node in s.path}
        if starts == {METALAKE}:
            inside = set(inventory.children(METALAKE))
        else:
            inside = {node for s in starts for node in inventory.within(s)}
        area = cls(above, {}, frozenset(starts), inventory, inside - above)
        for node in above | area.inside:
            area._note(model, node, roles)
        return area

    def _note(self, model: Model, node: ObjectRef, only: frozenset[str] | None = None) -> None:
        by_priv = model.by_object.get(node)
        if not by_priv:
            return
        for conds in by_priv.values():
            for roles in conds.values():
                for role in roles if only is None else roles & only:
                    self.role_nodes.setdefault(role, set()).add(node)

    def owned(self, model: Model, user: str) -> set[ObjectRef]:
        """What ``user`` owns that decides something in the area."""
        mine = model.owned_by.get(user)
        if not mine:
            return set()
        return {o for o in mine if o in self.above or o in self.inside}


def outermost(nodes: set[ObjectRef]) -> set[ObjectRef]:
    """``nodes`` without those that lie below another of them."""
    return {n for n in nodes if not any(a in nodes for a in n.path[:-1])}
