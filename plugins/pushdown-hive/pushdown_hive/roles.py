"""Model roles as metastore roles, where that stays exact.

A model role ``R`` becomes metastore role ``<role_prefix>R`` (``create_role``), granted
to each user who holds ``R`` in the model, directly or through a group (``grant_role``).
The metastore role carries a privilege on an object only when

- every holder of ``R`` is allowed it by the model (the compiler's answer: DENY, gates
  and owners included), so the role never gives a holder more than the model does, and
- ``R`` itself has an ALLOW on the object's path that leads to it (a role carries its
  own grants, not whatever its holders happen to share);

the rest of each holder's access stays per-user grants, and the plan says how much, per
role. A holder's per-user grants are its decisions minus what its roles carry, so what
``get_privilege_set`` answers (its own grants and its roles') is exactly the model's.

What a role carries depends on all its holders, so a sync that looks at some users
also recomputes every role they hold (or held, per the metastore) and every other
holder of those roles: :func:`plays` widens each region of the scope that far. The
other roles of those holders keep what the metastore holds for them (their holders'
decisions did not change).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.scope import Region, Resolved

#: Which model privileges granted to a role lead to each metastore privilege.
LEADS_TO: dict[str, frozenset[Privilege]] = {
    "SELECT": frozenset({Privilege.SELECT_TABLE, Privilege.MODIFY_TABLE}),
    "INSERT": frozenset({Privilege.MODIFY_TABLE}),
    "UPDATE": frozenset({Privilege.MODIFY_TABLE}),
    "DELETE": frozenset({Privilege.MODIFY_TABLE}),
    "CREATE": frozenset({Privilege.CREATE_TABLE}),
}

#: (database, table or None, privilege): one privilege on one object, whoever holds it
Triple = tuple[str, str | None, str]


@dataclass(frozen=True)
class ServerRoles:
    """The managed roles the metastore holds (prefixed names) and their USER members."""

    members: dict[str, frozenset[str]]
    #: (role, principal type, principal): a managed role held by a group or a role, or
    #: a role held by a managed role; pushdown grants none of these
    nested: frozenset[tuple[str, str, str]] = frozenset()
    #: (role, user): memberships held WITH ADMIN OPTION (made by hand: pushdown never does)
    admins: frozenset[tuple[str, str]] = frozenset()
    #: every managed role the metastore holds (``None``: those of ``members``)
    present: frozenset[str] | None = None
    #: the roles whose members and nesting were read (``None``: every one)
    read: frozenset[str] | None = None

    def names(self) -> frozenset[str]:
        return frozenset(self.members) if self.present is None else self.present


@dataclass(frozen=True)
class Play:
    """One region of a scope, widened to the holders of the roles it touches."""

    region: Region
    #: model roles whose metastore role is recomputed here (``None``: every role)
    roles: frozenset[str] | None


def plays(
    scope: Resolved,
    model: Model,
    held_by: Callable[[frozenset[str]], set[str]],
    names_of: Callable[[Iterable[str]], frozenset[str]],
    bearing: Callable[[frozenset[ObjectRef]], set[str]] | None = None,
) -> tuple[Play, ...]:
    """Each region of ``scope`` with its roles in play and their holders added.

    ``names_of``: the metastore user names of model users (removed ones too);
    ``held_by``: the model roles (without the prefix) that the metastore says those names
    hold; ``bearing``: the roles that may carry something on a region's roots (an ALLOW
    that leads to a metastore privilege there, or a grant the metastore holds there). A
    role bearing nothing on the roots carries nothing there before or after: its holders'
    decisions there do not depend on each other, so it is left out of play (a role held
    by everyone with only USE gates does not put everyone in play, and a table created
    recomputes the roles that may carry something on it, not every role)."""
    out = []
    for region in scope.regions:
        if region.users is None:  # every user, on the roots: the roles bearing something there
            bore = None if region.roots is None or bearing is None else frozenset(bearing(region.roots))
            out.append(Play(region, bore))
            continue
        roles = {r for u in region.users for r in model.roles_of(u)}
        roles |= held_by(names_of(region.users))
        if region.roots is not None and bearing is not None:
            roles &= bearing(region.roots)
        users = set(region.users)
        for role in roles:
            users |= model.holders_of(role) & model.users
        out.append(Play(Region(frozenset(users), region.roots), frozenset(roles)))
    return tuple(out)


#: the model privileges that lead to some metastore privilege
LEADING = frozenset().union(*LEADS_TO.values())


def allowing(model: Model, roots: Iterable[ObjectRef], catalog: str) -> set[str]:
    """Roles with an ALLOW that leads to a metastore privilege on the path of a root in
    ``catalog`` (or the metalake) or below it (by key: the model's index of what carries a
    grant at or below each object); roots in other catalogs bear nothing here."""
    objects: set[ObjectRef] = set()
    for root in roots:
        if root.type is not SecurableType.METALAKE and root.catalog != catalog:
            continue
        objects.update(root.path)
        objects.update(model.marked_within(root))
    out: set[str] = set()
    for obj in objects:
        for privilege, by_condition in model.by_object.get(obj, {}).items():
            if privilege in LEADING:
                out |= by_condition.get(Condition.ALLOW, set())
    return out


def holders(model: Model, role: str, withheld: set[str]) -> set[str] | None:
    """The role's holders among the model's users; ``None`` when one of them gets
    nothing at all (its name clashes): then the role must carry nothing either."""
    users = model.holders_of(role) & model.users
    return None if users & withheld else users


def carried(
    model: Model, role: str, catalog: str, users: Iterable[str], per_user: dict[str, set[Triple]]
) -> set[Triple]:
    """What the metastore role of ``role`` carries: what every holder is allowed and the
    role's own ALLOWs lead to."""
    sets = [per_user.get(u, set()) for u in users]
    if not sets:
        return set()
    lead = leads(model, role, catalog)
    return {t for t in set.intersection(*sets) if lead(t)}


def leads(model: Model, role: str, catalog: str) -> Callable[[Triple], bool]:
    """Whether one of the role's own ALLOWs leads to a privilege on an object: by key
    (the model's index of the grants on each object of the object's path), never a pass
    over every grant of the role (a role may hold grants on thousands of objects)."""

    def lead(triple: Triple) -> bool:
        db, table, privilege = triple
        obj = (
            ObjectRef(SecurableType.SCHEMA, (catalog, db))
            if table is None
            else ObjectRef(SecurableType.TABLE, (catalog, db, table))
        )
        wanted = LEADS_TO.get(privilege, ())
        for node in obj.path:
            on = model.by_object.get(node)
            if on is not None and any(role in on.get(p, {}).get(Condition.ALLOW, ()) for p in wanted):
                return True
        return False

    return lead
