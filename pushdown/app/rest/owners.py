"""Owners of metadata objects, and the roles bound to an object."""

from __future__ import annotations

from typing import Any

from pushdown.app.rest import problems, shapes
from pushdown.app.rest.call import Call, require_object, require_user
from pushdown.decide.requirements import LOAD_OPERATION
from pushdown.model.changes import GROUP_OWNER_REASON
from pushdown.model.securables import ObjectRef

Json = dict[str, Any]


# -- owners and object roles ------------------------------------------------------------


def _loaded_object(call: Call) -> tuple[ObjectRef, str]:
    """The path's metadata object, once the caller may load it (403) and it exists (404)."""
    metalake = call.metalake()
    ref = shapes.object_ref(call.params["type"], call.params["fullName"], metalake)
    call.check(LOAD_OPERATION[ref.type], ref)
    require_object(call, ref, metalake)
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
    require_object(call, ref, metalake)
    require_user(call, owner, "making the user an owner")
    call.acting().set_owner(ref, owner)
    return {"code": 0, "set": True}


def object_roles(call: Call) -> Json:
    ref, _ = _loaded_object(call)
    holders: set[str] = set()
    for by_cond in call.model.by_object.get(ref, {}).values():
        for roles in by_cond.values():
            holders |= roles
    return {"code": 0, "names": sorted(str(r) for r in call.visible("list_roles", sorted(holders)))}
