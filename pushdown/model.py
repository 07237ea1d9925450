"""The privilege model held in memory: principals, roles, grants, owners, inventory.

A :class:`Model` changes only through :meth:`Model.apply`, one event at a time, so the
in-memory model, the SQLite tables and the journal can never disagree about what a
change did. Validation lives in :mod:`pushdown.changes`, which turns a request into
events without touching the model.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from pushdown import events as ev
from pushdown.privileges import Condition, Privilege
from pushdown.scope import Principal, PrincipalKind
from pushdown.securables import ObjectRef


@dataclass(frozen=True, order=True)
class Grant:
    """One privilege with its condition on one object, held by a role."""

    object: ObjectRef
    privilege: Privilege
    condition: Condition

    def __str__(self) -> str:
        return f"{self.condition.value} {self.privilege.value} on {self.object}"


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
    #: group -> members an outside directory reported at the last sync (not used in decisions)
    external_members: dict[str, set[str]] = field(default_factory=dict)
    #: bumped by every applied event; caches derived from the model key on it
    version: int = 0

    # -- queries ---------------------------------------------------------------------

    def roles_of(self, user: str) -> dict[str, str]:
        """Every role the user holds, mapped to how: ``"user"`` or ``"group NAME"``."""
        held = {role: "directly" for role in self.user_roles.get(user, ())}
        for group in sorted(self.user_groups.get(user, ())):
            for role in self.group_roles.get(group, ()):
                held.setdefault(role, f"through group {group}")
        return held

    def holders_of(self, role: str) -> set[str]:
        """Users holding ``role``, directly or through a group."""
        users = {u for u, roles in self.user_roles.items() if role in roles}
        for group, roles in self.group_roles.items():
            if role in roles:
                users |= self.groups.get(group, set())
        return users

    def children(self, obj: ObjectRef) -> Iterator[ObjectRef]:
        depth = len(obj.names)
        for other in self.objects:
            if len(other.names) == depth + 1 and other.parent == obj:
                yield other

    def within(self, root: ObjectRef) -> list[ObjectRef]:
        """Registered objects in the subtree of ``root`` (``root`` included if registered)."""
        return [o for o in self.objects if o.is_within(root)]

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
        handler = getattr(self, f"_on_{event.name}")
        handler(event)
        self.version += 1

    def _on_user_added(self, e: ev.UserAdded) -> None:
        self.users.add(e.user)

    def _on_user_removed(self, e: ev.UserRemoved) -> None:
        self.users.discard(e.user)
        self.user_roles.pop(e.user, None)
        self.user_groups.pop(e.user, None)
        self.service_admins.discard(e.user)

    def _on_group_added(self, e: ev.GroupAdded) -> None:
        self.groups[e.group] = set()

    def _on_group_removed(self, e: ev.GroupRemoved) -> None:
        for user in self.groups.pop(e.group, set()):
            self.user_groups[user].discard(e.group)
        self.group_roles.pop(e.group, None)

    def _on_group_member_added(self, e: ev.GroupMemberAdded) -> None:
        self.groups[e.group].add(e.user)
        self.user_groups[e.user].add(e.group)

    def _on_group_member_removed(self, e: ev.GroupMemberRemoved) -> None:
        self.groups[e.group].discard(e.user)
        self.user_groups[e.user].discard(e.group)

    def _on_role_created(self, e: ev.RoleCreated) -> None:
        self.roles[e.role] = set()

    def _on_role_deleted(self, e: ev.RoleDeleted) -> None:
        for grant in self.roles.pop(e.role, set()):
            self._unindex(e.role, grant)
        for held in (*self.user_roles.values(), *self.group_roles.values()):
            held.discard(e.role)

    def _on_privileges_granted(self, e: ev.PrivilegesGranted) -> None:
        for privilege in e.privileges:
            grant = Grant(e.object, privilege, e.condition)
            self.roles[e.role].add(grant)
            self.by_object.setdefault(e.object, {}).setdefault(privilege, {}).setdefault(
                e.condition, set()
            ).add(e.role)

    def _on_privileges_revoked(self, e: ev.PrivilegesRevoked) -> None:
        for privilege in e.privileges:
            grant = Grant(e.object, privilege, e.condition)
            self.roles[e.role].discard(grant)
            self._unindex(e.role, grant)

    def _unindex(self, role: str, grant: Grant) -> None:
        by_priv = self.by_object.get(grant.object, {})
        holders = by_priv.get(grant.privilege, {}).get(grant.condition)
        if holders is None:
            return
        holders.discard(role)
        if not holders:
            del by_priv[grant.privilege][grant.condition]
            if not by_priv[grant.privilege]:
                del by_priv[grant.privilege]
            if not by_priv:
                del self.by_object[grant.object]

    def _on_role_granted(self, e: ev.RoleGranted) -> None:
        self._assignments(e.principal)[e.principal.name].add(e.role)

    def _on_role_revoked(self, e: ev.RoleRevoked) -> None:
        self._assignments(e.principal)[e.principal.name].discard(e.role)

    def _assignments(self, principal: Principal) -> dict[str, set[str]]:
        if principal.kind is PrincipalKind.GROUP:
            return self.group_roles
        return self.user_roles

    def _on_owner_set(self, e: ev.OwnerSet) -> None:
        if e.owner is None:
            self.owners.pop(e.object, None)
        else:
            self.owners[e.object] = e.owner

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
        if e.owner is not None:
            self.owners[e.object] = e.owner

    def _on_object_dropped(self, e: ev.ObjectDropped) -> None:
        self.objects.pop(e.object, None)
        self.owners.pop(e.object, None)

    def _on_object_renamed(self, e: ev.ObjectRenamed) -> None:
        old, new = e.object, e.new_object
        self.objects = {o.renamed(old, new): p for o, p in self.objects.items()}
        self.owners = {o.renamed(old, new): u for o, u in self.owners.items()}
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
