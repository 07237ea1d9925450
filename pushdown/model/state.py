"""The privilege model held in memory: principals, roles, grants, owners, inventory.

A :class:`Model` changes only through :meth:`Model.apply`, one event at a time, so the
in-memory model, the SQLite tables and the journal can never disagree about what a
change did. Validation lives in :mod:`pushdown.model.changes`, which turns a request into
events without touching the model.
"""

from __future__ import annotations

import copy
import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from pushdown.model import events as ev
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef, SecurableType


@dataclass(frozen=True, order=True)
class Grant:
    """One privilege with its condition on one object, held by a role."""

    object: ObjectRef
    privilege: Privilege
    condition: Condition

    def __str__(self) -> str:
        return f"{self.condition.value} {self.privilege.value} on {self.object}"


_NONE: frozenset[ObjectRef] = frozenset()
_LEAVES = (SecurableType.TOPIC, SecurableType.FILESET)
#: the stamps of :attr:`Model.grants_moved` and :attr:`Model.roles_moved`: one count for
#: every model of the process, so no two changes anywhere share a stamp (a copy of a model
#: and the model it was copied from never give one stamp two meanings)
_STAMPS = itertools.count(1)
#: entries of :attr:`Model.stamp_log` beyond which the older ones are dropped (half kept)
STAMP_LOG_KEPT = 4096


#: the stamps of :attr:`Model.held_stamps` (their own count: those of :data:`_STAMPS` are
#: each counted in a table of role or user stamps)
_HELD_STAMPS = itertools.count(1)


def stamp_now() -> int:
    """A stamp no change holds: every stamp given before it is smaller, every one given
    after it larger (a cache keeps it as the latest it has seen)."""
    return next(_STAMPS)


@dataclass
class Model:
    metalake: str = "metalake"
    users: set[str] = field(default_factory=set)
    groups: dict[str, set[str]] = field(default_factory=dict)
    roles: dict[str, set[Grant]] = field(default_factory=dict)
    user_roles: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    group_roles: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    owners: dict[ObjectRef, str] = field(default_factory=dict)
    objects: dict[ObjectRef, dict[str, str]] = field(default_factory=dict)
    service_admins: set[str] = field(default_factory=set)
    #: object -> privilege -> condition -> roles holding that grant (the evaluator's index)
    by_object: dict[ObjectRef, dict[Privilege, dict[Condition, set[str]]]] = field(default_factory=dict)
    #: user -> groups the user belongs to
    user_groups: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    #: group -> members an outside directory reported at the last sync (decisions and backends
    #: see them through pushdown.model.directory.enforced, never through the groups above)
    external_members: dict[str, set[str]] = field(default_factory=dict)
    #: role -> users holding it directly; role -> groups holding it (reverse of the two above)
    role_users: dict[str, set[str]] = field(default_factory=dict)
    role_groups: dict[str, set[str]] = field(default_factory=dict)
    #: user -> objects the user owns; parent -> registered children (for subtree walks)
    owned_by: dict[str, set[ObjectRef]] = field(default_factory=dict)
    kids: dict[ObjectRef, set[ObjectRef]] = field(default_factory=dict)
    #: parent -> its registered topics and filesets (of :attr:`kids`): a backend compiling
    #: them every time finds their schemas by key, not by a look at every schema's children
    leaves: dict[ObjectRef, set[ObjectRef]] = field(default_factory=dict)
    #: object -> the objects at or below it that carry a grant or an owner (registered or
    #: not): a scoped compile finds them by key, never by a pass over every grant
    marks: dict[ObjectRef, set[ObjectRef]] = field(default_factory=dict)
    #: schema spelled in lower case -> the objects at or below a schema of that name in any
    #: case, registered or carrying a grant or an owner, whose names have capitals: where a
    #: server folds names, the spellings it cannot tell apart are found by key
    capitals: dict[ObjectRef, set[ObjectRef]] = field(default_factory=dict)
    #: schema spelled case-folded (:meth:`str.casefold`) -> the objects at or below a schema
    #: of that name whose schema name is not its own case fold (``S1``, ``ſ1``, ``ß``),
    #: registered or carrying a grant or an owner: the spellings a case-blind server takes
    #: for one schema are found by key (a folded name is alone when nothing is here)
    folds: dict[ObjectRef, set[ObjectRef]] = field(default_factory=dict)
    #: catalog name -> its topics and filesets that carry a grant or an owner (registered
    #: or not; of :attr:`marks`): found by key, not by a look at every mark of the catalog
    marked_leaves: dict[str, set[ObjectRef]] = field(default_factory=dict)
    #: bumped by every applied event; caches derived from the model key on it
    version: int = 0
    #: role -> a stamp new whenever its grants changed (granted, revoked, moved by a rename,
    #: the role created or deleted); user -> a stamp new whenever the roles it holds may have
    #: changed (a role granted or revoked to it or to one of its groups, a group joined or
    #: left, removed, the user added or removed, a role it holds deleted). A cache of what a
    #: user's roles and their grants give is valid while the stamps it was made at stand
    #: (absent: never stamped, e.g. filled without events: trust nothing). Not compared.
    grants_moved: dict[str, int] = field(default_factory=dict, compare=False, repr=False)
    roles_moved: dict[str, int] = field(default_factory=dict, compare=False, repr=False)
    #: how many stamps :attr:`roles_moved` was given (one per user stamped, each time): a
    #: cache that kept it, and the latest stamp then, proves which users alone were stamped
    #: since (those of a few names whose stamps are newer, when as many as the count moved)
    #: without a pass over every user. Not compared.
    roles_stamped: int = field(default=0, compare=False, repr=False)
    #: the users :attr:`roles_moved` stamped, in stamp order: entry ``i`` is the user of the
    #: role stamp counted ``stamp_log_base + i + 1`` (the older entries dropped past
    #: :data:`STAMP_LOG_KEPT`): a cache that kept :attr:`roles_stamped` finds the users stamped
    #: since (:meth:`stamped_since`) without a pass over every user. Not compared.
    stamp_log: list[str] = field(default_factory=list, compare=False, repr=False)
    stamp_log_base: int = field(default=0, compare=False, repr=False)
    #: how many stamps :attr:`grants_moved` was given (one per role stamped, each time): as
    #: :attr:`roles_stamped`, a cache that kept it and the latest stamp then proves which
    #: roles alone had their grants moved since (those of a few names whose stamps are
    #: newer, when as many as the count moved). Not compared.
    grants_stamped: int = field(default=0, compare=False, repr=False)
    #: how many times a user or a role was added or removed (the events that move
    #: :attr:`users` or the keys of :attr:`roles`): a cache of what depends only on which
    #: users and roles exist (every name's mapping, the names refused), kept with this model
    #: object (alive) and this count, stands while both do, proved without a pass over every
    #: user and role. Another object (a copy, a directory view) proves nothing. Not compared.
    roster_stamped: int = field(default=0, compare=False, repr=False)
    #: object -> a stamp new whenever its grants (:attr:`by_object`) or its owner changed:
    #: a cache that kept an object's stamp proves it unmoved while the stamp stands (absent:
    #: never stamped: trust nothing, compare; the indexes rebuilt, as after a rename or a
    #: model filled directly, stamp every object holding or having held either anew). Not
    #: compared.
    held_stamps: dict[ObjectRef, int] = field(default_factory=dict, compare=False, repr=False)

    # -- copies ----------------------------------------------------------------------

    def __copy__(self) -> Model:
        """A copy sharing every value (a directory view): its stamps are this process's."""
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        return out

    def __deepcopy__(self, memo: dict[int, Any]) -> Model:
        """A copy of every value: its stamps, this process's, keep their meaning."""
        out = object.__new__(type(self))
        memo[id(self)] = out
        out.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return out

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickled (pickled here or in another process, whose count of stamps is not
        this one's: a stamp it gave could be given here again to another change of the
        same object, and its stamps may be newer than any given here, past what a cache
        takes for the latest, :func:`stamp_now`): every object of :attr:`held_stamps`, every
        user of :attr:`roles_moved` and every role of :attr:`grants_moved` is stamped anew
        (the counts and the log of users stamped count stamps, not their values: kept)."""
        self.__dict__.update(state)
        self.held_stamps = {obj: next(_HELD_STAMPS) for obj in self.held_stamps}
        self.roles_moved = {user: next(_STAMPS) for user in self.roles_moved}
        self.grants_moved = {role: next(_STAMPS) for role in self.grants_moved}

    # -- queries ---------------------------------------------------------------------

    def roles_of(self, user: str) -> dict[str, str]:
        """Every role the user holds, mapped to how: ``"user"`` or ``"group NAME"``."""
        held = {role: "directly" for role in self.user_roles.get(user, ())}
        for group in sorted(self.user_groups.get(user, ())):
            for role in self.group_roles.get(group, ()):
                held.setdefault(role, f"through group {group}")
        return held

    def holders_of(self, role: str) -> set[str]:
        """Users holding ``role``, directly or through a group (the one place this is answered)."""
        users = set(self.role_users.get(role, ()))
        for group in self.role_groups.get(role, ()):
            users |= self.groups.get(group, set())
        return users

    def children(self, obj: ObjectRef) -> Iterator[ObjectRef]:
        yield from self.kids.get(obj, ())

    def marked_within(self, root: ObjectRef) -> AbstractSet[ObjectRef]:
        """The objects at or below ``root`` that carry a grant or an owner (the model's own
        index, by key: read it, never change it)."""
        return self.marks.get(root, _NONE)

    def within(self, root: ObjectRef) -> list[ObjectRef]:
        """Registered objects in the subtree of ``root`` (``root`` included if registered)."""
        out = [root] if root in self.objects else []
        todo = [root]
        while todo:
            for kid in self.kids.get(todo.pop(), ()):
                out.append(kid)
                todo.append(kid)
        return out

    def grants_within(self, root: ObjectRef) -> list[tuple[str, Grant]]:
        return [(role, g) for role, grants in self.roles.items() for g in grants if g.object.is_within(root)]

    def principal_exists(self, principal: Principal) -> bool:
        if principal.kind is PrincipalKind.USER:
            return principal.name in self.users
        if principal.kind is PrincipalKind.GROUP:
            return principal.name in self.groups
        return principal.name in self.roles

    def catalog_backend(self, catalog: str) -> str | None:
        props = self.objects.get(ObjectRef.of("catalog", (catalog,)))
        return None if props is None else props.get("backend")

    # -- the only way the model changes ------------------------------------------------

    def apply(self, event: ev.Event) -> None:
        _HANDLERS[type(event)](self, event)
        self.version += 1

    def reindex(self) -> None:
        """Rebuild the derived indexes after ``objects``/``owners`` were filled directly."""
        self.owned_by, self.kids, self.marks, self.capitals, self.leaves = {}, {}, {}, {}, {}
        self.folds, self.marked_leaves = {}, {}
        # filled directly: every object that holds or held grants or an owner stamped anew
        restamped = {*self.held_stamps, *self.by_object, *self.owners}
        self.held_stamps = {obj: next(_HELD_STAMPS) for obj in restamped}
        for obj in self.objects:
            self._link(obj)
        for obj, owner in self.owners.items():
            self.owned_by.setdefault(owner, set()).add(obj)
        for obj in (*self.by_object, *self.owners):
            self._remark(obj)

    def _recase(self, obj: ObjectRef) -> None:
        """Keep :attr:`capitals` and :attr:`folds` right for ``obj`` after it was registered,
        dropped, or its grants or owner changed."""
        self._refold(obj)
        names = obj.names
        if len(names) < 2 or all(n == n.lower() for n in names[1:]):
            return
        key = ObjectRef(SecurableType.SCHEMA, (names[0], names[1].lower()))
        if obj in self.objects or obj in self.by_object or obj in self.owners:
            self.capitals.setdefault(key, set()).add(obj)
            return
        spelled = self.capitals.get(key)
        if spelled is not None:
            spelled.discard(obj)
            if not spelled:
                del self.capitals[key]

    def _refold(self, obj: ObjectRef) -> None:
        names = obj.names
        if len(names) < 2 or names[1] == names[1].casefold():
            return
        key = ObjectRef(SecurableType.SCHEMA, (names[0], names[1].casefold()))
        if obj in self.objects or obj in self.by_object or obj in self.owners:
            self.folds.setdefault(key, set()).add(obj)
            return
        spelled = self.folds.get(key)
        if spelled is not None:
            spelled.discard(obj)
            if not spelled:
                del self.folds[key]

    def capitals_within(self, schema: ObjectRef) -> AbstractSet[ObjectRef]:
        """The objects with capitals in their names (registered, granted or owned) at or
        below any spelling of ``schema`` (given in lower case): by key, read only."""
        return self.capitals.get(schema, _NONE)

    def _remark(self, obj: ObjectRef) -> None:
        """Keep :attr:`marks` right for ``obj`` after its grants or owner changed."""
        self._recase(obj)
        leaf = obj.type in _LEAVES and len(obj.names) >= 2
        if obj in self.by_object or obj in self.owners:
            for node in obj.path:
                self.marks.setdefault(node, set()).add(obj)
            if leaf:
                self.marked_leaves.setdefault(obj.names[0], set()).add(obj)
            return
        for node in obj.path:
            marked = self.marks.get(node)
            if marked is not None:
                marked.discard(obj)
                if not marked:
                    del self.marks[node]
        leaves = self.marked_leaves.get(obj.names[0]) if leaf else None
        if leaves is not None:
            leaves.discard(obj)
            if not leaves:
                del self.marked_leaves[obj.names[0]]

    def _link(self, obj: ObjectRef) -> None:
        self._recase(obj)
        parent = obj.parent
        if parent is not None:
            self.kids.setdefault(parent, set()).add(obj)
            if obj.type in _LEAVES:
                self.leaves.setdefault(parent, set()).add(obj)

    def _unlink(self, obj: ObjectRef) -> None:
        self._recase(obj)
        parent = obj.parent
        siblings = self.kids.get(parent) if parent is not None else None
        if siblings is not None:
            siblings.discard(obj)
            if not siblings:
                del self.kids[parent]  # type: ignore[arg-type]
        leaves = self.leaves.get(parent) if parent is not None else None
        if leaves is not None:
            leaves.discard(obj)
            if not leaves:
                del self.leaves[parent]  # type: ignore[arg-type]

    def _own(self, obj: ObjectRef, owner: str | None) -> None:
        self.held_stamps[obj] = next(_HELD_STAMPS)
        old = self.owners.pop(obj, None)
        if old is not None:
            held = self.owned_by.get(old)
            if held is not None:
                held.discard(obj)
                if not held:
                    del self.owned_by[old]
        if owner is not None:
            self.owners[obj] = owner
            self.owned_by.setdefault(owner, set()).add(obj)
        self._remark(obj)

    def stamped_since(self, count: int) -> frozenset[str] | None:
        """The users whose roles were stamped since :attr:`roles_stamped` was ``count``
        (``None``: not known, ``count`` older than the log kept or not one this model
        reached)."""
        log, base = self.stamp_log, self.stamp_log_base
        if count < base or count > self.roles_stamped or base + len(log) != self.roles_stamped:
            return None
        return frozenset(log[count - base :])

    def _moved_roles_of(self, users: Iterable[str]) -> None:
        log = self.stamp_log
        for user in users:
            self.roles_moved[user] = next(_STAMPS)
            self.roles_stamped += 1
            log.append(user)
        if len(log) > STAMP_LOG_KEPT:
            dropped = len(log) - STAMP_LOG_KEPT // 2
            del log[:dropped]
            self.stamp_log_base += dropped

    def _moved_grants_of(self, role: str) -> None:
        self.grants_moved[role] = next(_STAMPS)
        self.grants_stamped += 1

    def _on_user_added(self, e: ev.UserAdded) -> None:
        self.users.add(e.user)
        self.roster_stamped += 1
        self._moved_roles_of([e.user])

    def _on_user_removed(self, e: ev.UserRemoved) -> None:
        self._moved_roles_of([e.user])
        self.users.discard(e.user)
        self.roster_stamped += 1
        for role in self.user_roles.pop(e.user, set()):
            _drop(self.role_users, role, e.user)
        self.user_groups.pop(e.user, None)
        self.service_admins.discard(e.user)

    def _on_group_added(self, e: ev.GroupAdded) -> None:
        self.groups[e.group] = set()

    def _on_group_removed(self, e: ev.GroupRemoved) -> None:
        self._moved_roles_of(list(self.groups.get(e.group, ())))
        for user in self.groups.pop(e.group, set()):
            self.user_groups[user].discard(e.group)
        for role in self.group_roles.pop(e.group, set()):
            _drop(self.role_groups, role, e.group)

    def _on_group_member_added(self, e: ev.GroupMemberAdded) -> None:
        self.groups[e.group].add(e.user)
        self.user_groups[e.user].add(e.group)
        self._moved_roles_of([e.user])

    def _on_group_member_removed(self, e: ev.GroupMemberRemoved) -> None:
        self.groups[e.group].discard(e.user)
        self.user_groups[e.user].discard(e.group)
        self._moved_roles_of([e.user])

    def _on_role_created(self, e: ev.RoleCreated) -> None:
        self.roles[e.role] = set()
        self.roster_stamped += 1
        self._moved_grants_of(e.role)

    def _on_role_deleted(self, e: ev.RoleDeleted) -> None:
        self._moved_grants_of(e.role)
        self._moved_roles_of(self.holders_of(e.role))
        self.roster_stamped += 1
        for grant in self.roles.pop(e.role, set()):
            self._unindex(e.role, grant)
        for user in self.role_users.pop(e.role, set()):
            self.user_roles[user].discard(e.role)
        for group in self.role_groups.pop(e.role, set()):
            self.group_roles[group].discard(e.role)

    def _on_privileges_granted(self, e: ev.PrivilegesGranted) -> None:
        for privilege in e.privileges:
            grant = Grant(e.object, privilege, e.condition)
            self.held_stamps[e.object] = next(_HELD_STAMPS)
            self.roles[e.role].add(grant)
            self.by_object.setdefault(e.object, {}).setdefault(privilege, {}).setdefault(
                e.condition, set()
            ).add(e.role)
        self._remark(e.object)
        self._moved_grants_of(e.role)

    def _on_privileges_revoked(self, e: ev.PrivilegesRevoked) -> None:
        self._moved_grants_of(e.role)
        for privilege in e.privileges:
            grant = Grant(e.object, privilege, e.condition)
            self.roles[e.role].discard(grant)
            self._unindex(e.role, grant)

    def _unindex(self, role: str, grant: Grant) -> None:
        by_priv = self.by_object.get(grant.object, {})
        holders = by_priv.get(grant.privilege, {}).get(grant.condition)
        if holders is None:
            return
        self.held_stamps[grant.object] = next(_HELD_STAMPS)
        holders.discard(role)
        if not holders:
            del by_priv[grant.privilege][grant.condition]
            if not by_priv[grant.privilege]:
                del by_priv[grant.privilege]
            if not by_priv:
                del self.by_object[grant.object]
                self._remark(grant.object)

    def _on_role_granted(self, e: ev.RoleGranted) -> None:
        held, index = self._assignments(e.principal)
        held[e.principal.name].add(e.role)
        index.setdefault(e.role, set()).add(e.principal.name)
        self._moved_assignment(e.principal)

    def _on_role_revoked(self, e: ev.RoleRevoked) -> None:
        held, index = self._assignments(e.principal)
        held[e.principal.name].discard(e.role)
        _drop(index, e.role, e.principal.name)
        self._moved_assignment(e.principal)

    def _moved_assignment(self, principal: Principal) -> None:
        """The users whose roles a role granted to or revoked from ``principal`` moves."""
        if principal.kind is PrincipalKind.GROUP:
            self._moved_roles_of(list(self.groups.get(principal.name, ())))
        else:
            self._moved_roles_of([principal.name])

    def _assignments(self, principal: Principal) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        if principal.kind is PrincipalKind.GROUP:
            return self.group_roles, self.role_groups
        return self.user_roles, self.role_users

    def _on_owner_set(self, e: ev.OwnerSet) -> None:
        self._own(e.object, e.owner)

    def _on_service_admins_set(self, e: ev.ServiceAdminsSet) -> None:
        self.service_admins = set(e.users)

    def _on_external_members_changed(self, e: ev.ExternalMembersChanged) -> None:
        members = (self.external_members.get(e.group, set()) - e.removed) | e.added
        if members:
            self.external_members[e.group] = members
        else:
            self.external_members.pop(e.group, None)

    def _on_object_created(self, e: ev.ObjectCreated) -> None:
        self.objects[e.object] = dict(e.properties)
        self._link(e.object)
        if e.owner is not None:
            self._own(e.object, e.owner)

    def _on_object_dropped(self, e: ev.ObjectDropped) -> None:
        if self.objects.pop(e.object, None) is not None:
            self._unlink(e.object)
        self._own(e.object, None)

    def _on_object_renamed(self, e: ev.ObjectRenamed) -> None:
        old, new = e.object, e.new_object
        self.objects = {o.renamed(old, new): p for o, p in self.objects.items()}
        self.owners = {o.renamed(old, new): u for o, u in self.owners.items()}
        self.reindex()
        moved = [(role, g) for role, g in self.grants_within(old)]
        for role, grant in moved:
            self._unindex(role, grant)
            self.roles[role].discard(grant)
        for role, grant in moved:
            self._on_privileges_granted(
                ev.PrivilegesGranted(
                    role,
                    grant.object.renamed(old, new),
                    frozenset({grant.privilege}),
                    grant.condition,
                )
            )


def _drop(index: dict[str, set[str]], key: str, member: str) -> None:
    members = index.get(key)
    if members is not None:
        members.discard(member)
        if not members:
            del index[key]


_HANDLERS: dict[type[ev.Event], Callable[[Model, Any], None]] = {
    ev.UserAdded: Model._on_user_added,
    ev.UserRemoved: Model._on_user_removed,
    ev.GroupAdded: Model._on_group_added,
    ev.GroupRemoved: Model._on_group_removed,
    ev.GroupMemberAdded: Model._on_group_member_added,
    ev.GroupMemberRemoved: Model._on_group_member_removed,
    ev.RoleCreated: Model._on_role_created,
    ev.RoleDeleted: Model._on_role_deleted,
    ev.PrivilegesGranted: Model._on_privileges_granted,
    ev.PrivilegesRevoked: Model._on_privileges_revoked,
    ev.RoleGranted: Model._on_role_granted,
    ev.RoleRevoked: Model._on_role_revoked,
    ev.OwnerSet: Model._on_owner_set,
    ev.ServiceAdminsSet: Model._on_service_admins_set,
    ev.ObjectCreated: Model._on_object_created,
    ev.ObjectRenamed: Model._on_object_renamed,
    ev.ObjectDropped: Model._on_object_dropped,
    ev.ExternalMembersChanged: Model._on_external_members_changed,
}
if set(_HANDLERS) != set(ev.EVENT_TYPES.values()):  # pragma: no cover - caught at import by every run
    raise TypeError("every event type needs exactly one handler in pushdown.model.state._HANDLERS")
