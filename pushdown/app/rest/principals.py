"""Users and groups, and the roles granted to them (Gravitino's user, group and
permission routes for principals).

Reads are decided with the evaluator (``call.check``, ``call.visible``); changes by the
core acting as the caller. A name that does not exist is answered after the caller was
found allowed, so a refusal never tells what exists.

A user or group is the one the decision model holds (``AccessControl.decision_model``:
the model with the directory's members recorded at the last sync), in the listing, in a
read and in a grant alike: a user whom only the directory names is listed, read (404
never) and refused a role until he is added (his roles are the model's to hold).
"""

from __future__ import annotations

from typing import Any

from pushdown.app.rest import problems, shapes
from pushdown.app.rest.call import Call, created, removed, require_user
from pushdown.model.principals import Principal
from pushdown.model.securables import METALAKE

Json = dict[str, Any]


# -- users ------------------------------------------------------------------------------


def user_json(call: Call, user: str) -> Json:
    roles = sorted(call.ac.decision_model().user_roles.get(user, ()))
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
    names = [str(u) for u in call.listed("list_users")]
    if shapes.flag(call.query.get("details"), "details"):
        audits, held = call.ac.audits("user"), call.model.user_roles
        users = [
            {
                "name": u,
                "roles": sorted(held.get(u, ())),
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
    if user not in call.ac.decision_model().users:  # the directory's members too, as listed
        raise problems.not_found("NoSuchUserException", f"user {user!r} does not exist")
    return {"code": 0, "user": user_json(call, user)}


def remove_user(call: Call) -> Json:
    call.metalake()
    user = call.params["user"]
    return {"code": 0, "removed": removed(lambda: call.acting().remove_user(user))}


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
    names = [str(g) for g in call.listed("list_groups")]
    if shapes.flag(call.query.get("details"), "details"):
        audits, held = call.ac.audits("group"), call.model.group_roles
        groups = [
            {
                "name": g,
                "roles": sorted(held.get(g, ())),
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
    if group not in call.ac.decision_model().groups:
        raise problems.not_found("NoSuchGroupException", f"group {group!r} does not exist")
    return {"code": 0, "group": group_json(call, group)}


def remove_group(call: Call) -> Json:
    call.metalake()
    group = call.params["group"]
    return {"code": 0, "removed": removed(lambda: call.acting().remove_group(group))}


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
    if principal.kind.value == "user":
        require_user(call, principal.name, "granting or revoking a role")
    elif principal.name not in call.model.groups:
        raise problems.not_found("NoSuchGroupException", f"group {principal.name!r} does not exist")
    # one change for all the roles: one by one, a role's ALLOW could be held (and pushed by
    # a sync) before another role's DENY that overrides it
    acting = call.acting()
    (acting.revoke_roles if revoke else acting.grant_roles)(roles, principal)


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
