"""Which part of Ranger a sync over a scope compiles and diffs. Pure.

A scope whose regions all have roots at or below schemas of the Hive catalog (as the
model now says) is a *focus*: those schemas' databases are compiled and diffed, the others left as they
are. Roles, topics and filesets are compiled every time (one policy per object, cheap),
so their facts are always within. Anything wider (a catalog, the metalake, a principal
on every object), or anything in another catalog (a change there may move which catalog
the Hive service holds, and every Hive policy with it), is everything; so is a change
naming every table of the Hive catalog (its first table makes it the Hive service's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.plan import Fact
from pushdown.reconcile.reach import scope_reach
from pushdown.reconcile.scope import Resolved
from pushdown_ranger.compile.deciding import GATES
from pushdown_ranger.compile.naming import exact
from pushdown_ranger.facts import PolicyFact

Focus = frozenset[ObjectRef] | None


def focus_of(scope: Resolved, hive: str | None) -> Focus:
    """The Hive schemas ``scope`` names (a leaf counts as its schema), or ``None``: the
    core's :func:`scope_reach` of the Hive catalog, where another catalog's object
    reaches everything."""
    names = scope_reach(scope, hive, tables=False, others=True).names
    if names is None:
        return None
    # without a Hive catalog every root reaches everything: ``names`` is empty here
    return frozenset(ObjectRef(SecurableType.SCHEMA, (hive, db)) for db in names if hive is not None)


def made_hive(model: Model, scope: Resolved, hive: str) -> bool:
    """Whether ``scope`` may be what made ``hive`` the Hive catalog: every table it holds
    (registered, or named by a grant) lies in the scope's roots. The first table of a
    catalog holding none makes it the Hive service's (see
    :func:`~pushdown_ranger.compile.desired.hive_catalog`): every Hive policy of its
    databases is then due, not only those of the scope's. The search ends at the first
    table outside the roots, so a change among many tables costs one look."""
    if any(r.roots is None for r in scope.regions):
        return True
    roots = frozenset().union(*(r.roots or () for r in scope.regions))
    root = ObjectRef(SecurableType.CATALOG, (hive,))

    def outside(table: ObjectRef) -> bool:
        return not any(node in roots for node in table.path)

    for obj in model.marked_within(root):
        if obj.type is SecurableType.TABLE and obj in model.by_object and outside(obj):
            return False
    return not any(
        t.type is SecurableType.TABLE and outside(t) for s in model.children(root) for t in model.children(s)
    )


def covering(focus: Focus, hive_service: str) -> Callable[[Fact], bool]:
    """Which facts a focus covers: everything but the Hive policies of other databases
    (compared without case, as Ranger's Hive resources are). A policy on resources pushdown
    never writes (several databases, a wildcard: edited by hand) is always covered, so
    whatever sync comes next takes pushdown's items out of it."""
    if focus is None:
        return lambda fact: True
    return Covers(frozenset(s.names[1].casefold() for s in focus), hive_service)


@dataclass(frozen=True)
class Covers:
    """:func:`covering` of a focus: the facts of ``databases`` (folded) and all but the
    Hive policies shaped as pushdown writes them (:func:`covered_database`). The plan's diff
    hands it to :meth:`~pushdown_ranger.backend.RangerBackend.apart`, which keeps the facts
    apart by that database and so looks at the focus's alone."""

    databases: frozenset[str]
    hive_service: str

    def __call__(self, fact: Fact) -> bool:
        database = covered_database(fact, self.hive_service)
        return database is None or database in self.databases


def covered_database(fact: Fact, hive_service: str) -> str | None:
    """The database (folded) of a Hive policy of ``hive_service`` shaped as pushdown writes
    them, whose focus alone covers it; ``None``: every focus covers the fact (a role, a
    policy of another service, a Hive policy made or edited by hand: every sync)."""
    if not isinstance(fact, PolicyFact) or fact.service != hive_service:
        return None
    database = shaped_database(fact)
    return None if database is None else database.casefold()


def shaped_database(fact: PolicyFact) -> str | None:
    """The database of a resource set shaped as pushdown writes Hive policies
    (``database=d``; ``database=d, table=t|?*, column=*``), else ``None``: worked out once
    per fact (:attr:`PolicyFact.kept`; a read keeps the facts of the policies it did not
    see change, so the plan's diff, which keeps its answer apart by it, works out those the
    last writes answered)."""
    kept = fact.kept
    if "database" not in kept:
        kept["database"] = database_of(fact)
    return kept["database"]  # type: ignore[return-value]


def database_of(fact: PolicyFact) -> str | None:
    """:func:`shaped_database`, worked out."""
    values = {k: v for k, v, recursive in fact.resources if not recursive}
    if len(values) != len(fact.resources) or set(values) not in (
        {"database"},
        {"database", "table", "column"},
    ):
        return None
    if any(len(v) != 1 for v in values.values()) or not exact(values["database"][0]):
        return None
    if "table" in values and (
        values["column"] != ("*",) or not (exact(values["table"][0]) or values["table"] == ("?*",))
    ):
        return None
    return values["database"][0]


def scope_users(scope: Resolved) -> frozenset[str] | None:
    """The users ``scope`` names (``None``: every user): those a scoped sync maps again."""
    if any(r.users is None for r in scope.regions):
        return None
    return frozenset().union(*(r.users or () for r in scope.regions))


def members_moved(scope: Resolved) -> frozenset[str] | None:
    """The users whose roles or groups a scope's changes can have moved (``None``: a full
    scope, every one): those of its regions of principals on every object (a membership's
    event names its principals so). A hint for the compile of pushdown's roles, which
    compares the model's memberships before trusting it."""
    if scope.full:
        return None
    return frozenset().union(*(r.users or () for r in scope.regions if r.roots is None))


def principal_databases(
    model: Model, users: frozenset[str], hive: str, enforced: frozenset[str]
) -> set[str] | None:
    """The Hive databases (of catalog ``hive``) where the model can decide anything for
    ``users`` now: a grant of one of their roles beyond the gates, any DENY of theirs, an
    object one owns (``None``: every database: one on a catalog or the metalake, one in
    another catalog this backend enforces, a service admin among them)."""
    if users & model.service_admins:
        return None
    objects = [o for u in users for o in model.owned_by.get(u, ())]
    for role in {r for u in users for r in model.roles_of(u)}:
        objects += _deciding(model, role)
    return _databases(objects, hive, enforced)


def role_databases(model: Model, role: str, hive: str, enforced: frozenset[str]) -> set[str] | None:
    """The Hive databases (of catalog ``hive``) where a grant of ``role`` beyond the gates,
    or a DENY of it, is (``None``: every database: one on a catalog or the metalake, one in
    another catalog this backend enforces), as :func:`principal_databases` finds them."""
    return _databases(_deciding(model, role), hive, enforced)


def _deciding(model: Model, role: str) -> list[ObjectRef]:
    """The objects of ``role``'s grants beyond the gates and of its DENYs."""
    grants = model.roles.get(role, ())
    return [g.object for g in grants if g.condition is Condition.DENY or g.privilege not in GATES]


def _databases(objects: Iterable[ObjectRef], hive: str, enforced: frozenset[str]) -> set[str] | None:
    """The Hive databases (of catalog ``hive``) ``objects`` lie in (``None``: every database:
    one on a catalog or the metalake, one in another catalog this backend enforces); objects
    of a catalog this backend does not enforce decide nothing here."""
    out: set[str] = set()
    for obj in objects:
        catalog = obj.names[0] if obj.type is not SecurableType.METALAKE else None
        if catalog is not None and catalog not in enforced:
            continue  # decides nothing here
        if catalog != hive or len(obj.names) < 2:
            return None
        out.add(obj.names[1])
    return out
