"""The access-control routes: users, groups, roles, permissions, owners, object roles.

Each handler takes a :class:`Call` and returns the response body (HTTP 200). Reads are
authorized with the evaluator (``call.check`` / ``call.visible``), changes by the core
acting as the caller; a name that does not exist is answered after the caller was found
allowed, so a refusal never tells what exists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pushdown.app.rest import problems, shapes
from pushdown.app.rest.call import Call, object_exists
from pushdown.decide.requirements import LOAD_OPERATION
from pushdown.errors import Forbidden, ModelError, UnknownPrincipal
from pushdown.model.changes import GROUP_OWNER_REASON
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType

Json = dict[str, Any]


def created(
    call: Call, make: Callable[[], object], exists: Callable[[], bool], conflict: problems.Problem
) -> None:
    """Run a create; a refusal because the name is taken is a 409 (never a refusal to act)."""
    try:
        make()
    except Forbidden:
        raise
    except ModelError:
        if exists():
            raise conflict from None
        raise


def _removed(remove: Callable[[], object]) -> bool:
    """Run a remove; False when there was nothing to remove (Gravitino answers 200 false)."""
    try:
        remove()
    except Forbidden:
        raise
    except UnknownPrincipal:
        return False
    return True


# -- users ------------------------------------------------------------------------------


def user_json(call: Call, user: str) -> Json:
    roles = sorted(call.model.user_roles.get(user, ()))
    return {"name": user, "roles": roles, "audit": call.audit("user", user)}


def add_user(call: Call) -> Json:
    call.metalake()
    user = shapes.name(shapes.obj(call.body).get("name"), "name")
    created(
        call,
        lambda: call.acting().add_user(user),
        lambda: user in call.model.users,
        problems.already_exists("UserAlreadyExistsException", f"user {user!r} already exists"),
    )
    return {"code": 0, "user": user_json(call, user)}


def list_users(call: Call) -> Json:
    call.metalake()
    call.check("list_users", METALAKE)
    names = sorted(str(u) for u in call.visible("list_users", sorted(call.model.users)))
    if shapes.flag(call.query.get("details"), "details"):
        audits = call.ac.audits("user")
        users = [
            {
                "name": u,
                "roles": sorted(call.model.user_roles.get(u, ())),
                "audit": shapes.audit(audits.get(u)),
            }
            for u in names
        ]
        return {"code": 0, "users": users}
    return {"code": 0, "names": names}


def get_user(call: Call) -> Json:
    call.metalake()
    user = call.params["user"]
    call.check("get_user", user)
    if user not in call.model.users:
        raise problems.not_found("NoSuchUserException", f"user {user!r} does not exist")
    return {"code": 0, "user": user_json(call, user)}


def remove_user(call: Call) -> Json:
    call.metalake()
    user = call.params["user"]
    return {"code": 0, "removed": _removed(lambda: call.acting().remove_user(user))}


# -- groups -----------------------------------------------------------------------------


def group_json(call: Call, group: str) -> Json:
    roles = sorted(call.model.group_roles.get(group, ()))
    return {"name": group, "roles": roles, "audit": call.audit("group", group)}


def add_group(call: Call) -> Json:
    call.metalake()
    group = shapes.name(shapes.obj(call.body).get("name"), "name")
    created(
        call,
        lambda: call.acting().add_group(group),
        lambda: group in call.model.groups,
        problems.already_exists("GroupAlreadyExistsException", f"group {group!r} already exists"),
    )
    return {"code": 0, "group": group_json(call, group)}


def list_groups(call: Call) -> Json:
    call.metalake()
    call.check("list_groups", METALAKE)
    names = sorted(str(g) for g in call.visible("list_groups", sorted(call.model.groups)))
    if shapes.flag(call.query.get("details"), "details"):
        audits = call.ac.audits("group")
        groups = [
            {
                "name": g,
                "roles": sorted(call.model.group_roles.get(g, ())),
                "audit": shapes.audit(audits.get(g)),
            }
            for g in names
        ]
        return {"code": 0, "groups": groups}
    return {"code": 0, "names": names}


def get_group(call: Call) -> Json:
    call.metalake()
    group = call.params["group"]
    call.check("get_group", group)
    if group not in call.model.groups:
        raise problems.not_found("NoSuchGroupException", f"group {group!r} does not exist")
    return {"code": 0, "group": group_json(call, group)}


def remove_group(call: Call) -> Json:
    call.metalake()
    group = call.params["group"]
    return {"code": 0, "removed": _removed(lambda: call.acting().remove_group(group))}


# -- roles ------------------------------------------------------------------------------


def _role_ref(role: str) -> ObjectRef:
    return ObjectRef(SecurableType.ROLE, (role,))


def role_json(call: Call, role: str, metalake: str) -> Json:
    by_object: dict[ObjectRef, list[tuple[Privilege, Condition]]] = {}
    for grant in sorted(call.model.roles.get(role, ())):
        by_object.setdefault(grant.object, []).append((grant.privilege, grant.condition))
    objects = [
        {
            "fullName": shapes.full_name(ref, metalake),
            "type": ref.type.value,
            "privileges": [shapes.privilege_json(p, c) for p, c in privs],
        }
        for ref, privs in sorted(by_object.items())
    ]
    return {"name": role, "properties": {}, "securableObjects": objects, "audit": call.audit("role", role)}


def _securable(
    call: Call, item: Any, where: str, metalake: str
) -> tuple[ObjectRef, list[tuple[Privilege, Condition]]]:
    entry = shapes.obj(item, where)
    ref = shapes.object_ref(entry.get("type"), entry.get("fullName"), metalake)
    privileges = shapes.privileges(entry.get("privileges"), f"{where}.privileges")
    for privilege, _ in privileges:
        try:
            privilege.check_grantable_on(ref.type)
        except ModelError as exc:
            raise problems.bad_request(f"{where}: {exc}", "IllegalPrivilegeException") from None
    return ref, privileges


def _require_object(call: Call, ref: ObjectRef, metalake: str) -> None:
    if not object_exists(call.model, ref):
        raise problems.not_found(
            "NoSuchMetadataObjectException",
            f"{ref.type.label} {shapes.full_name(ref, metalake)!r} does not exist; register it first",
        )


def _grant(
    call: Call, role: str, ref: ObjectRef, privileges: list[tuple[Privilege, Condition]], revoke: bool
) -> None:
    for condition in (Condition.ALLOW, Condition.DENY):
        chosen = [p for p, c in privileges if c is condition]
        if chosen:
            acting = call.acting()
            change = acting.revoke_privileges if revoke else acting.grant_privileges
            change(role, ref, chosen, condition)


def create_role(call: Call) -> Json:
    """A role and its securable objects, all or nothing: the caller must be allowed to
    create the role and to grant each object's privileges (checked before anything is
    written); a later failure deletes the role again."""
    metalake = call.metalake()
    body = shapes.obj(call.body)
    role = shapes.name(body.get("name"), "name")
    shapes.properties(body.get("properties"))
    raw = body.get("securableObjects") or []
    if not isinstance(raw, list):
        raise problems.bad_request('"securableObjects" must be a list')
    objects = [_securable(call, item, f"securableObjects[{i}]", metalake) for i, item in enumerate(raw)]
    call.check("create_role", role)
    for ref, _ in objects:
        call.check("grant_privilege", ref)
    if role in call.model.roles:
        raise problems.already_exists("RoleAlreadyExistsException", f"role {role!r} already exists")
    for ref, _ in objects:
        _require_object(call, ref, metalake)
    call.acting().create_role(role)
    try:
        for ref, privileges in objects:
            _grant(call, role, ref, privileges, revoke=False)
    except BaseException:
        call.acting().delete_role(role)
        raise
    return {"code": 0, "role": role_json(call, role, metalake)}


def list_roles(call: Call) -> Json:
    call.metalake()
    call.check("list_roles", METALAKE)
    names = sorted(str(r) for r in call.visible("list_roles", sorted(call.model.roles)))
    return {"code": 0, "names": names}


def get_role(call: Call) -> Json:
    metalake = call.metalake()
    role = call.params["role"]
    call.check("get_role", role)
    if role not in call.model.roles:
        raise problems.not_found("NoSuchRoleException", f"role {role!r} does not exist")
    return {"code": 0, "role": role_json(call, role, metalake)}


def delete_role(call: Call) -> Json:
    call.metalake()
    role = call.params["role"]
    dropped = _removed(lambda: call.acting().delete_role(role))
    return {"code": 0, "dropped": dropped, "deleted": dropped}


# -- permissions ------------------------------------------------------------------------


def _role_names(call: Call, operation: str) -> list[str]:
    roles = shapes.names_list(shapes.obj(call.body).get("roleNames"), "roleNames")
    for role in roles:
        call.check(operation, role)
    for role in roles:
        if role not in call.model.roles:
            raise problems.not_found("NoSuchRoleException", f"role {role!r} does not exist")
    return roles


def _roles_to(call: Call, principal: Principal, revoke: bool) -> None:
    roles = _role_names(call, "revoke_role" if revoke else "grant_role")
    holders = call.model.users if principal.kind.value == "user" else call.model.groups
    if principal.name not in holders:
        kind = principal.kind.value
        error = "NoSuchUserException" if kind == "user" else "NoSuchGroupException"
        raise problems.not_found(error, f"{kind} {principal.name!r} does not exist")
    for role in roles:
        acting = call.acting()
        (acting.revoke_role if revoke else acting.grant_role)(role, principal)


def grant_roles_to_user(call: Call) -> Json:
    call.metalake()
    user = call.params["user"]
    _roles_to(call, Principal.user(user), revoke=False)
    return {"code": 0, "user": user_json(call, user)}


def revoke_roles_from_user(call: Call) -> Json:
    call.metalake()
    user = call.params["user"]
    _roles_to(call, Principal.user(user), revoke=True)
    return {"code": 0, "user": user_json(call, user)}


def grant_roles_to_group(call: Call) -> Json:
    call.metalake()
    group = call.params["group"]
    _roles_to(call, Principal.group(group), revoke=False)
    return {"code": 0, "group": group_json(call, group)}


def revoke_roles_from_group(call: Call) -> Json:
    call.metalake()
    group = call.params["group"]
    _roles_to(call, Principal.group(group), revoke=True)
    return {"code": 0, "group": group_json(call, group)}


def _privileges_on(call: Call, revoke: bool) -> Json:
    metalake = call.metalake()
    role = call.params["role"]
    item = {"type": call.params["type"], "fullName": call.params["fullName"], "privileges": None}
    item["privileges"] = shapes.obj(call.body).get("privileges")
    ref, privileges = _securable(call, item, "privileges", metalake)
    call.check("revoke_privilege" if revoke else "grant_privilege", ref)
    if role not in call.model.roles:
        raise problems.not_found("NoSuchRoleException", f"role {role!r} does not exist")
    _require_object(call, ref, metalake)
    _grant(call, role, ref, privileges, revoke)
    return {"code": 0, "role": role_json(call, role, metalake)}


def grant_privileges(call: Call) -> Json:
    return _privileges_on(call, revoke=False)


def revoke_privileges(call: Call) -> Json:
    return _privileges_on(call, revoke=True)


# -- owners and object roles ------------------------------------------------------------


def _loaded_object(call: Call) -> tuple[ObjectRef, str]:
    """The path's metadata object, once the caller may load it (403) and it exists (404)."""
    metalake = call.metalake()
    ref = shapes.object_ref(call.params["type"], call.params["fullName"], metalake)
    call.check(LOAD_OPERATION[ref.type], ref)
    _require_object(call, ref, metalake)
    return ref, metalake


def get_owner(call: Call) -> Json:
    ref, _ = _loaded_object(call)
    owner = call.model.owners.get(ref)
    return {"code": 0} if owner is None else {"code": 0, "owner": {"name": owner, "type": "user"}}


def set_owner(call: Call) -> Json:
    metalake = call.metalake()
    ref = shapes.object_ref(call.params["type"], call.params["fullName"], metalake)
    body = shapes.obj(call.body)
    owner = shapes.name(body.get("name"), "name")
    kind = body.get("type", "user")
    if not isinstance(kind, str) or kind.lower() not in ("user", "group"):
        raise problems.bad_request(f'"type" {kind!r}: an owner is a USER')
    if kind.lower() == "group":
        raise problems.bad_request(f"cannot make group {owner!r} the owner of {ref}: {GROUP_OWNER_REASON}")
    call.check("set_owner", ref)
    _require_object(call, ref, metalake)
    if owner not in call.model.users:
        raise problems.not_found("NoSuchUserException", f"user {owner!r} does not exist")
    call.acting().set_owner(ref, owner)
    return {"code": 0, "set": True}


def object_roles(call: Call) -> Json:
    ref, _ = _loaded_object(call)
    holders: set[str] = set()
    for by_cond in call.model.by_object.get(ref, {}).values():
        for roles in by_cond.values():
            holders |= roles
    return {"code": 0, "names": sorted(str(r) for r in call.visible("list_roles", sorted(holders)))}
