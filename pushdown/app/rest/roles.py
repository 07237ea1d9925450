"""Roles and the privileges they grant on metadata objects (Gravitino's role routes and
its permission routes for roles)."""

from __future__ import annotations

from typing import Any

from pushdown.app.rest import problems, shapes
from pushdown.app.rest.call import Call, removed, require_object
from pushdown.errors import ModelError
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef

Json = dict[str, Any]


# -- roles ------------------------------------------------------------------------------


def role_json(call: Call, role: str, metalake: str) -> Json:
    by_object: dict[ObjectRef, list[tuple[Privilege, Condition]]] = {}
    # in the grants' order (object first): the objects come out sorted too
    for grant in sorted(call.model.roles.get(role, ())):
        by_object.setdefault(grant.object, []).append((grant.privilege, grant.condition))
    objects = [
        {
            "fullName": shapes.full_name(ref, metalake),
            "type": ref.type.value,
            "privileges": [shapes.privilege_json(p, c) for p, c in privs],
        }
        for ref, privs in by_object.items()
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


#: The order of a request's changes: every step is narrower than the request's end, so a
#: failure (or a sync) in between never leaves an ALLOW without the DENY sent with it.
NARROWER_FIRST = {False: (Condition.DENY, Condition.ALLOW), True: (Condition.ALLOW, Condition.DENY)}


def _grant(
    call: Call,
    role: str,
    ref: ObjectRef,
    privileges: list[tuple[Privilege, Condition]],
    revoke: bool,
    conditions: tuple[Condition, ...] | None = None,
) -> None:
    for condition in conditions or NARROWER_FIRST[revoke]:
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
        require_object(call, ref, metalake)
    call.acting().create_role(role)
    try:  # every object's DENYs before any ALLOW: see NARROWER_FIRST
        for condition in NARROWER_FIRST[False]:
            for ref, privileges in objects:
                _grant(call, role, ref, privileges, revoke=False, conditions=(condition,))
    except BaseException:
        call.acting().delete_role(role)
        raise
    return {"code": 0, "role": role_json(call, role, metalake)}


def list_roles(call: Call) -> Json:
    call.metalake()
    call.check("list_roles", METALAKE)
    names = sorted(r.names[0] if isinstance(r, ObjectRef) else str(r) for r in call.listed("list_roles"))
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
    dropped = removed(lambda: call.acting().delete_role(role))
    return {"code": 0, "dropped": dropped, "deleted": dropped}


# -- privileges on objects ------------------------------------------------------------


def _privileges_on(call: Call, revoke: bool) -> Json:
    metalake = call.metalake()
    role = call.params["role"]
    item = {"type": call.params["type"], "fullName": call.params["fullName"], "privileges": None}
    item["privileges"] = shapes.obj(call.body).get("privileges")
    ref, privileges = _securable(call, item, "privileges", metalake)
    call.check("revoke_privilege" if revoke else "grant_privilege", ref)
    # The role is acted on too: a caller who may not see it (get_role) gets one fixed
    # refusal before it is looked up, so a missing role and a hidden one read the same.
    if not call.may("get_role", role):
        raise problems.refused(call.user, f"{'revoke' if revoke else 'grant'} privileges of", f"role {role}")
    if role not in call.model.roles:
        raise problems.not_found("NoSuchRoleException", f"role {role!r} does not exist")
    require_object(call, ref, metalake)
    _grant(call, role, ref, privileges, revoke)
    return {"code": 0, "role": role_json(call, role, metalake)}


def grant_privileges(call: Call) -> Json:
    return _privileges_on(call, revoke=False)


def revoke_privileges(call: Call) -> Json:
    return _privileges_on(call, revoke=True)


# -- the web UI's override ----------------------------------------------------------------


def override_privileges(call: Call) -> Json:
    """``PUT .../permissions/roles/{role}`` with ``{"overrides": [securable objects]}``
    (Gravitino's ``overrideRolePrivileges``, the web UI's edit): afterwards the role holds
    exactly the listed privileges on exactly the listed objects (an object left out loses
    all of its). The caller must first pass ``get_role`` on the role, checked before the
    role is looked up and refused with one fixed message; then every privilege added needs
    ``grant_privilege`` on its object, every one taken away ``revoke_privilege`` (refused
    as the role is when the caller did not name the object); all are checked before
    anything is written, and the changes go narrowest first across all objects."""
    metalake = call.metalake()
    role = call.params["role"]
    # One role-level check before any lookup, with one fixed refusal naming only what the
    # caller sent: a missing role, a role with grants and one without read the same.
    refusal = problems.refused(call.user, "override the privileges of", f"role {role}")
    try:
        call.check("get_role", role)
    except problems.Problem:
        raise refusal from None
    raw = shapes.obj(call.body).get("overrides")
    if not isinstance(raw, list):
        raise problems.bad_request('"overrides" must be a list of securable objects')
    wanted: dict[ObjectRef, set[tuple[Privilege, Condition]]] = {}
    for i, item in enumerate(raw):
        ref, privileges = _securable(call, item, f"overrides[{i}]", metalake)
        if ref in wanted:
            raise problems.bad_request(f"overrides[{i}]: {ref.name!r} is listed twice")
        wanted[ref] = set(privileges)
    held: dict[ObjectRef, set[tuple[Privilege, Condition]]] = {}
    for grant in call.model.roles.get(role, ()):
        held.setdefault(grant.object, set()).add((grant.privilege, grant.condition))
    added = {ref: wanted[ref] - held.get(ref, set()) for ref in wanted}
    taken = {ref: held[ref] - wanted.get(ref, set()) for ref in held}
    for ref, changed in added.items():
        if changed:
            call.check("grant_privilege", ref)
    for ref, changed in taken.items():
        if not changed:
            continue
        try:
            call.check("revoke_privilege", ref)
        except problems.Problem:
            if ref in wanted:  # the caller named it
                raise
            raise refusal from None
    if role not in call.model.roles:
        raise problems.not_found("NoSuchRoleException", f"role {role!r} does not exist")
    for ref, changed in added.items():
        if changed:
            require_object(call, ref, metalake)
    # Ordered across all objects (see NARROWER_FIRST): every added DENY, every taken ALLOW,
    # every taken DENY, every added ALLOW; no step allows what neither end allows.
    steps = (
        (added, False, NARROWER_FIRST[False][0]),
        (taken, True, NARROWER_FIRST[True][0]),
        (taken, True, NARROWER_FIRST[True][1]),
        (added, False, NARROWER_FIRST[False][1]),
    )
    for changes, revoke, condition in steps:
        for ref, changed in changes.items():
            _grant(call, role, ref, list(changed), revoke, conditions=(condition,))
    return {"code": 0, "role": role_json(call, role, metalake)}
