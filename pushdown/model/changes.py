"""Turn a requested change into the events that describe it, or reject it.

Every function here is pure: it reads the model, checks the request, and returns the
events that :meth:`Model.apply` and the store will record. A change that cascades
(removing a user who owns objects, dropping a schema with grants below it) returns
one event per fact, so the journal says exactly what happened.
"""

from __future__ import annotations

from collections.abc import Iterable

from pushdown.errors import AlreadyExists, ModelError, UnknownObject, UnknownPrincipal
from pushdown.model import events as ev
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import DATA_TYPES, METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Grant, Model
from pushdown.model.text import MAX_NAME, check_name, has_control, too_long

GROUP_OWNER_REASON = (
    "groups can be granted roles and privileges, but they cannot be owners of "
    "securable objects; only users can be owners"
)


def check_principal_name(kind: str, name: str) -> None:
    check_name(kind, name)


def check_object_name(obj: ObjectRef) -> None:
    """Control characters, and parts longer than Gravitino's limit, are refused in every
    part of an object's name."""
    if any(too_long(part) for part in obj.names):
        raise ModelError(f"{obj.type.label} name: each part may hold at most {MAX_NAME} characters")
    if any(has_control(part) for part in obj.names):
        raise ModelError(f"{obj.type.label} name {obj.name!r} contains a control character; names may not")


def require_user(model: Model, user: str) -> None:
    if user not in model.users:
        raise UnknownPrincipal(f"unknown user {user!r}; add it first")


def require_group(model: Model, group: str) -> None:
    if group not in model.groups:
        raise UnknownPrincipal(f"unknown group {group!r}; add it first")


def require_role(model: Model, role: str) -> None:
    if role not in model.roles:
        raise UnknownPrincipal(f"unknown role {role!r}; create it first")


def require_object(model: Model, obj: ObjectRef) -> None:
    check_object_name(obj)
    if obj == METALAKE or obj.type is SecurableType.ROLE:
        if obj.type is SecurableType.ROLE:
            require_role(model, obj.names[0])
        return
    if obj not in model.objects:
        raise UnknownObject(f"unknown {obj}; register it first")


def require_catalog(model: Model, obj: ObjectRef) -> None:
    """A data object's catalog must be registered: it says which backend enforces it."""
    check_object_name(obj)
    catalog = obj.ancestor(SecurableType.CATALOG)
    if catalog is not None and catalog not in model.objects:
        raise UnknownObject(f"{obj} lies in unknown {catalog}; register the catalog first")


# -- principals ------------------------------------------------------------------------


def add_user(model: Model, user: str) -> list[ev.Event]:
    check_principal_name("user", user)
    if user in model.users:
        raise AlreadyExists(f"user {user!r} already exists")
    return [ev.UserAdded(user)]


def remove_user(model: Model, user: str) -> list[ev.Event]:
    require_user(model, user)
    out: list[ev.Event] = []
    for group in sorted(model.user_groups.get(user, ())):
        out.append(ev.GroupMemberRemoved(group, user))
    for role in sorted(model.user_roles.get(user, ())):
        out.append(ev.RoleRevoked(role, Principal.user(user)))
    for obj in sorted(model.owned_by.get(user, ())):
        out.append(ev.OwnerSet(obj, None, user))
    if user in model.service_admins:
        out.append(ev.ServiceAdminsSet(frozenset(model.service_admins - {user})))
    return [*out, ev.UserRemoved(user)]


def add_group(model: Model, group: str, members: Iterable[str] = ()) -> list[ev.Event]:
    check_principal_name("group", group)
    if group in model.groups:
        raise AlreadyExists(f"group {group!r} already exists")
    out: list[ev.Event] = [ev.GroupAdded(group)]
    for user in sorted(set(members)):
        require_user(model, user)
        out.append(ev.GroupMemberAdded(group, user))
    return out


def remove_group(model: Model, group: str) -> list[ev.Event]:
    require_group(model, group)
    out: list[ev.Event] = [ev.GroupMemberRemoved(group, u) for u in sorted(model.groups[group])]
    out += [ev.RoleRevoked(r, Principal.group(group)) for r in sorted(model.group_roles[group])]
    return [*out, ev.GroupRemoved(group)]


def add_member(model: Model, group: str, user: str) -> list[ev.Event]:
    require_group(model, group)
    require_user(model, user)
    return [] if user in model.groups[group] else [ev.GroupMemberAdded(group, user)]


def remove_member(model: Model, group: str, user: str) -> list[ev.Event]:
    require_group(model, group)
    return [ev.GroupMemberRemoved(group, user)] if user in model.groups[group] else []


def set_service_admins(model: Model, users: Iterable[str]) -> list[ev.Event]:
    wanted = frozenset(users)
    for user in sorted(wanted):
        require_user(model, user)
    return [] if wanted == model.service_admins else [ev.ServiceAdminsSet(wanted)]


# -- roles and grants ----------------------------------------------------------------


def create_role(model: Model, role: str, owner: str | None = None) -> list[ev.Event]:
    check_principal_name("role", role)
    if role in model.roles:
        raise AlreadyExists(f"role {role!r} already exists")
    out: list[ev.Event] = [ev.RoleCreated(role)]
    if owner is not None:
        require_user(model, owner)
        out.append(ev.OwnerSet(ObjectRef.of("role", (role,)), owner, None))
    return out


def delete_role(model: Model, role: str) -> list[ev.Event]:
    require_role(model, role)
    out: list[ev.Event] = []
    for user in sorted(model.role_users.get(role, ())):
        out.append(ev.RoleRevoked(role, Principal.user(user)))
    for group in sorted(model.role_groups.get(role, ())):
        out.append(ev.RoleRevoked(role, Principal.group(group)))
    out += _revoke_all(role, sorted(model.roles[role]))
    role_obj = ObjectRef.of("role", (role,))
    if role_obj in model.owners:
        out.append(ev.OwnerSet(role_obj, None, model.owners[role_obj]))
    return [*out, ev.RoleDeleted(role)]


def _revoke_all(role: str, grants: Iterable[Grant]) -> list[ev.Event]:
    return [ev.PrivilegesRevoked(role, g.object, frozenset({g.privilege}), g.condition) for g in grants]


def _privileges(obj: ObjectRef, privileges: Iterable[Privilege | str]) -> frozenset[Privilege]:
    parsed: set[Privilege] = set()
    for given in privileges:
        privilege = given if isinstance(given, Privilege) else Privilege.parse(given)
        try:
            privilege.check_grantable_on(obj.type)
        except ModelError as exc:
            if isinstance(given, str) and given.strip().upper() != privilege.value:
                raise ModelError(f"{exc} ({given} is the deprecated name of {privilege.value})") from None
            raise
        parsed.add(privilege)
    if not parsed:
        raise ModelError(f"no privileges given for {obj}")
    return frozenset(parsed)


def grant_privileges(
    model: Model,
    role: str,
    obj: ObjectRef,
    privileges: Iterable[Privilege | str],
    condition: Condition | str = Condition.ALLOW,
) -> list[ev.Event]:
    require_role(model, role)
    wanted = _privileges(obj, privileges)
    require_catalog(model, obj)
    condition = _condition(condition)
    new = wanted - _held_on(model, role, obj, condition)
    return [ev.PrivilegesGranted(role, obj, frozenset(new), condition)] if new else []


def revoke_privileges(
    model: Model,
    role: str,
    obj: ObjectRef,
    privileges: Iterable[Privilege | str],
    condition: Condition | str = Condition.ALLOW,
) -> list[ev.Event]:
    require_role(model, role)
    check_object_name(obj)
    wanted = _privileges(obj, privileges)
    condition = _condition(condition)
    gone = wanted & _held_on(model, role, obj, condition)
    return [ev.PrivilegesRevoked(role, obj, frozenset(gone), condition)] if gone else []


def _condition(condition: Condition | str) -> Condition:
    """A condition given as text (``"DENY"``) is parsed: kept as text, a DENY would not be
    recognised as one by the evaluator, and would count as an ALLOW."""
    return condition if isinstance(condition, Condition) else Condition.parse(condition)


def _held_on(model: Model, role: str, obj: ObjectRef, condition: Condition) -> set[Privilege]:
    """The privileges ``role`` holds on ``obj`` with ``condition`` (from the object index)."""
    return {p for p, by_cond in model.by_object.get(obj, {}).items() if role in by_cond.get(condition, ())}


def grant_role(model: Model, role: str, principal: Principal) -> list[ev.Event]:
    require_role(model, role)
    _require_holder(model, principal)
    assigned = _held(model, principal)
    return [] if role in assigned else [ev.RoleGranted(role, principal)]


def revoke_role(model: Model, role: str, principal: Principal) -> list[ev.Event]:
    require_role(model, role)
    _require_holder(model, principal)
    return [ev.RoleRevoked(role, principal)] if role in _held(model, principal) else []


def _require_holder(model: Model, principal: Principal) -> None:
    if principal.kind is PrincipalKind.ROLE:
        raise ModelError("roles are granted to users and groups, not to other roles")
    if principal.kind is PrincipalKind.USER:
        require_user(model, principal.name)
    else:
        require_group(model, principal.name)


def _held(model: Model, principal: Principal) -> set[str]:
    table = model.group_roles if principal.kind is PrincipalKind.GROUP else model.user_roles
    return table.get(principal.name, set())


# -- owners and objects ----------------------------------------------------------------


def set_owner(
    model: Model, obj: ObjectRef, owner: str, kind: PrincipalKind = PrincipalKind.USER
) -> list[ev.Event]:
    if kind is not PrincipalKind.USER or (owner not in model.users and owner in model.groups):
        what = "group" if kind is PrincipalKind.USER else kind.value
        raise ModelError(f"cannot make {what} {owner!r} the owner of {obj}: {GROUP_OWNER_REASON}")
    require_user(model, owner)
    require_object(model, obj)
    previous = model.owners.get(obj)
    return [] if previous == owner else [ev.OwnerSet(obj, owner, previous)]


def clear_owner(model: Model, obj: ObjectRef) -> list[ev.Event]:
    previous = model.owners.get(obj)
    return [] if previous is None else [ev.OwnerSet(obj, None, previous)]


def create_object(
    model: Model,
    obj: ObjectRef,
    creator: str | None = None,
    properties: dict[str, str] | None = None,
) -> list[ev.Event]:
    """Register an object; its creator (a user) becomes its owner."""
    check_object_name(obj)
    if obj.type in (SecurableType.METALAKE, SecurableType.ROLE):
        raise ModelError(f"a {obj.type.label} is not created as an object; use its own call")
    if obj in model.objects:
        raise AlreadyExists(f"{obj} already exists")
    if obj.type in DATA_TYPES and obj.parent is not None:
        require_object(model, obj.parent)
    if creator is not None:
        require_user(model, creator)
    props = tuple(sorted((properties or {}).items()))
    return [ev.ObjectCreated(obj, props, creator)]


def drop_object(model: Model, obj: ObjectRef) -> list[ev.Event]:
    return drop_objects(model, [obj])


def drop_objects(model: Model, objects: Iterable[ObjectRef]) -> list[ev.Event]:
    """Drop objects and everything below them: their grants are revoked, their owners
    cleared. One pass over the objects that carry grants, however many are dropped."""
    roots = set(objects)
    for obj in roots:
        require_object(model, obj)
    doomed: set[ObjectRef] = set()
    for root in sorted(roots, key=lambda o: len(o.names)):
        if root not in doomed:
            doomed.update(model.within(root))
    out: list[ev.Event] = []
    for role, grant in sorted(_grants_below(model, roots)):
        out += _revoke_all(role, [grant])
    for node in sorted(doomed, key=lambda o: (-len(o.names), o.type.value, o.names)):
        if node in model.owners:
            out.append(ev.OwnerSet(node, None, model.owners[node]))
        out.append(ev.ObjectDropped(node))
    return out


def _grants_below(model: Model, roots: set[ObjectRef]) -> list[tuple[str, Grant]]:
    found = []
    for obj, by_priv in model.by_object.items():
        if not roots.isdisjoint(obj.path):
            for privilege, by_cond in by_priv.items():
                for condition, holders in by_cond.items():
                    found += [(role, Grant(obj, privilege, condition)) for role in holders]
    return found


def rename_object(model: Model, obj: ObjectRef, new_last: str) -> list[ev.Event]:
    """Rename the last segment of an object's name; grants and owners below it follow."""
    require_object(model, obj)
    if obj.type not in DATA_TYPES:
        raise ModelError(f"a {obj.type.label} cannot be renamed here")
    check_principal_name("object", new_last)
    new = ObjectRef(obj.type, (*obj.names[:-1], new_last))
    if new == obj:
        return []
    taken = model.within(new) or model.grants_within(new) or [o for o in model.owners if o.is_within(new)]
    if taken:
        raise ModelError(f"cannot rename {obj} to {new}: objects, grants or owners already exist there")
    return [ev.ObjectRenamed(obj, new)]
