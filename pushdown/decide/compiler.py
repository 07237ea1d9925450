"""The entitlement compiler: which users may do which operations on which held objects.

Set-wise and exact. Given the model, an inventory (what a backend's server holds, in
model names), a scope (users, and object subtrees) and the operations a backend asks
about, it returns the same answers :func:`pushdown.decide.evaluator.authorize` gives,
without asking it once per (user, object):

- the work is split by catalog: what decides inside a catalog is the grants and owners
  on its subtree and on the metalake, nothing else;
- within a catalog, users are grouped into classes by what decides for them there: the
  roles they hold (directly or through groups) restricted to the roles with a grant in
  that catalog or on the metalake, and service-admin status; a class is computed once;
- a user who owns something there gets a personal view of the owned subtrees only;
- objects are grouped by what decides for them: an object with no grant (of the class's
  roles) and no owner of its own decides like a stand-in child of its nearest ancestor
  that carries something, so a schema of a thousand plain tables costs one decision.

The cost is bounded by the scope: the roles and objects read are those on the paths
of the scope's roots and below them, never the whole estate for a small change.
Questions about objects outside the scope are not answered reliably; ask within it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from pushdown.decide.area import Area, outermost
from pushdown.decide.decider import Decider, compilable
from pushdown.decide.inventory import Inventory
from pushdown.decide.requirements import OPERATIONS, AllOf, AnyOf, Can, Operation, ServiceAdmin, Term
from pushdown.decide.views import CompositeView, Keys, NoView, Owned, OwnerView, View
from pushdown.model.securables import LEAF_TYPES, METALAKE, ObjectRef
from pushdown.model.state import Model


@dataclass
class Entitlements:
    """The compiler's answer: a view per user, and the classes of users sharing one."""

    operations: tuple[str, ...]
    inventory: Inventory
    roots: frozenset[ObjectRef]
    by_user: dict[str, View] = field(default_factory=dict)
    #: per part (a catalog, or "" for the metalake's own level): the shared views and
    #: their users (owners included: their personal views differ only where they own)
    classes: dict[str, list[tuple[frozenset[str], View]]] = field(default_factory=dict)
    #: per part: the users who own something there, with their personal views
    owners: dict[str, dict[str, OwnerView]] = field(default_factory=dict)

    @property
    def users(self) -> list[str]:
        return sorted(self.by_user)

    def view(self, user: str) -> View:
        return self.by_user.get(user) or _NOBODY

    def allowed(self, user: str, operation: str, obj: ObjectRef) -> bool:
        return self.view(user).allowed(operation, obj)


_NOBODY = NoView()


class EntitlementCompiler:
    """Compiles one model for a fixed list of operations; reusable across scopes."""

    def __init__(self, model: Model, operations: Sequence[str]) -> None:
        self.model = model
        self.operations = tuple(dict.fromkeys(operations))
        self._admin = _admin_needed(self.operations)

    def compile(
        self,
        inventory: Inventory,
        users: Collection[str] | None = None,
        roots: Iterable[ObjectRef] | None = None,
    ) -> Entitlements:
        """Decide for ``users`` (default: every user) on held objects within ``roots``
        (default: everything). A leaf root widens to its container."""
        model = self.model
        starts = _starts(roots)
        wanted = sorted(model.users if users is None else [u for u in users if u in model.users])
        result = Entitlements(self.operations, inventory, frozenset(starts))
        held = {u: frozenset(model.roles_of(u)) for u in wanted}
        # for some users only: the area notes their roles alone (the others' decide nothing here)
        roles = None if users is None else frozenset().union(*held.values())
        parts = {name: self._part(inventory, where, held, roles) for name, where in _parts(starts, inventory)}
        for user in wanted:
            result.by_user[user] = CompositeView({name: views[user] for name, views in parts.items()})
        for name, views in parts.items():
            result.classes[name] = _classes(views)
            result.owners[name] = {u: v for u, v in views.items() if isinstance(v, OwnerView)}
        return result

    def _part(
        self,
        inventory: Inventory,
        starts: set[ObjectRef],
        held: dict[str, frozenset[str]],
        roles: frozenset[str] | None = None,
    ) -> dict[str, View]:
        """One view per user for one catalog (or the metalake level), shared within a class."""
        model = self.model
        area = Area.of(model, inventory, starts, roles)
        relevant = frozenset(area.role_nodes)  # a set: intersected with each user's few roles
        shared: dict[tuple[frozenset[str], bool], View] = {}
        out: dict[str, View] = {}
        for user, roles_held in held.items():
            roles = roles_held.intersection(relevant) if roles_held else roles_held
            admin = self._admin and user in model.service_admins
            view = shared.get((roles, admin))
            if view is None:
                view = shared[(roles, admin)] = self._view(area, roles, admin)
            owned = area.owned(model, user)
            if owned:
                view = self._owner(area, view, owned, model.owned_by[user])
            out[user] = view
        return out

    def _view(self, area: Area, roles: frozenset[str], admin: bool) -> View:
        nodes: set[ObjectRef] = set()
        for role in roles:
            nodes.update(area.role_nodes[role])
        decider = Decider(self.model, roles, (), admin)
        return View(decider, Keys.of(nodes), area.inventory, area.starts, self.operations)

    def _owner(
        self, area: Area, shared: View, owned: set[ObjectRef], owned_all: Collection[ObjectRef]
    ) -> OwnerView:
        """A personal view, used only where the user owns (the owned subtrees and their paths).

        Its keys are the owned objects and the class's keys in the region or right below
        it, so a container in the region sees every child that carries something."""
        region = Owned(owned)
        nodes = owned | _keys_near(shared.keys, region)
        # walk from what is owned inside the area, and from a start only when it lies in an
        # owned subtree (not merely above something owned: that would walk the whole catalog)
        starts = {o for o in owned if o not in area.above}
        starts |= {s for s in area.starts if any(n in owned for n in s.path)}
        base = shared.decider
        decider = Decider(self.model, base.roles, owned_all, base.admin, base=base)
        personal = View(decider, Keys.of(nodes), area.inventory, frozenset(starts), self.operations)
        return OwnerView(personal, shared, region)


def _keys_near(keys: Keys, region: Owned) -> set[ObjectRef]:
    """The class's keys in ``region`` or right below it, without scanning every key: those
    on or right below the paths down to the owned objects, and those inside an owned
    container (the same set as ``region.has(k) or region.has_parent_of(k)`` over all keys)."""
    out = {k for node in region.above for k in keys.kids.get(node, ())}
    if METALAKE in keys.nodes:
        out.add(METALAKE)  # on every path
    containers = {o for o in region.owned if o.type not in LEAF_TYPES}
    if containers:
        out.update(k for k in keys.nodes if not containers.isdisjoint(k.path))
    return out


def _parts(starts: set[ObjectRef], inventory: Inventory) -> Iterable[tuple[str, set[ObjectRef]]]:
    """Split the starts by catalog; the metalake splits into its catalogs and its own level."""
    by_catalog: dict[str, set[ObjectRef]] = {}
    for start in starts:
        if start == METALAKE:
            yield "", {METALAKE}
            for catalog in inventory.children(METALAKE):
                by_catalog.setdefault(catalog.names[0], set()).add(catalog)
        else:
            by_catalog.setdefault(start.names[0], set()).add(start)
    yield from sorted(by_catalog.items())


def _classes(views: dict[str, View]) -> list[tuple[frozenset[str], View]]:
    members: dict[int, set[str]] = {}
    seen: dict[int, View] = {}
    for user, view in views.items():
        if isinstance(view, OwnerView):
            view = view.shared
        members.setdefault(id(view), set()).add(user)
        seen[id(view)] = view
    return [(frozenset(us), seen[key]) for key, us in members.items()]


def _starts(roots: Iterable[ObjectRef] | None) -> set[ObjectRef]:
    if roots is None:
        return {METALAKE}
    return outermost({r.parent if r.type in LEAF_TYPES and r.parent is not None else r for r in roots})


#: per list of operations: (the rows checked, by name: theirs and those their terms reach
#: through :class:`Can`; whether one needs the service admin)
_CHECKED: dict[tuple[str, ...], tuple[tuple[tuple[str, Operation], ...], bool]] = {}


def _admin_needed(operations: tuple[str, ...]) -> bool:
    """Whether one of ``operations`` asks for the service admin, each checked compilable
    (an error otherwise): once per list of operations while every row the check read is the
    one read then (the operations' own and those their terms reach: ``load_table`` asks
    ``load_schema``, whose row is checked with it). A compile per sync builds a compiler: the
    check of every operation's terms is not made again each time."""
    hit = _CHECKED.get(operations)
    if hit is not None and all(OPERATIONS.get(name) is row for name, row in hit[0]):
        return hit[1]
    admin = any(_needs_admin(compilable(op).requires) for op in operations)
    _CHECKED[operations] = (_read_rows(operations), admin)
    return admin


def _read_rows(operations: Iterable[str]) -> tuple[tuple[str, Operation], ...]:
    """The rows of ``operations`` and of every operation their terms reach through
    :class:`Can` (what :func:`~pushdown.decide.decider.compilable` read), by name."""
    rows: dict[str, Operation] = {}
    todo = list(operations)
    while todo:
        name = todo.pop()
        row = OPERATIONS.get(name)
        if name in rows or row is None:
            continue
        rows[name] = row
        todo += _reached(row.requires)
    return tuple(rows.items())


def _reached(term: Term) -> list[str]:
    if isinstance(term, AllOf | AnyOf):
        return [name for t in term.terms for name in _reached(t)]
    return [term.operation] if isinstance(term, Can) else []


def _needs_admin(term: Term) -> bool:
    if isinstance(term, AllOf | AnyOf):
        return any(_needs_admin(t) for t in term.terms)
    return isinstance(term, ServiceAdmin)


__all__ = ["EntitlementCompiler", "Entitlements"]
