"""The version, the client's ``close()``, and the metalake: pushdown serves one metalake
per store (``ac.metalake()``), created by a service admin, dropped by its owner."""

from __future__ import annotations

from typing import Any

from pushdown.app.rest import problems, shapes
from pushdown.app.rest.call import Call
from pushdown.errors import Forbidden, ModelError
from pushdown.model.securables import METALAKE

Json = dict[str, Any]
API_VERSION = "1.3.0"
#: Gravitino's reserved metalake property (``Metalake.PROPERTY_IN_USE``): the served
#: metalake is always in use; a caller may not set it.
IN_USE = "in-use"


def version(call: Call) -> Json:
    return {"code": 0, "version": {"version": API_VERSION, "compileDate": "", "gitCommit": ""}}


def close(call: Call) -> Json:
    """The client's ``close()`` sends ``CLOSE /``: nothing to close on this side."""
    return {"code": 0}


# -- the metalake -----------------------------------------------------------------------


def metalake_json(call: Call, created: bool = False) -> Json:
    """The metalake; loaded or listed, its properties carry ``in-use`` (as Gravitino 1.3's
    load does; its create answers the properties as given)."""
    info = call.ac.metalake()
    shown = dict(info.properties or {}) if created else {**dict(info.properties or {}), IN_USE: "true"}
    return {
        "name": info.name,
        "comment": info.comment,
        "properties": shown,
        "audit": call.audit("metalake", info.name),
    }


def list_metalakes(call: Call) -> Json:
    info = call.ac.metalake()
    shown = info.exists and call.may("load_metalake", METALAKE)
    return {"code": 0, "metalakes": [metalake_json(call)] if shown else []}


def create_metalake(call: Call) -> Json:
    body = shapes.obj(call.body)
    name = shapes.name(body.get("name"), "name")
    comment = shapes.optional_text(body.get("comment"), "comment")
    props = shapes.properties(body.get("properties"))
    if IN_USE in props:
        raise problems.bad_request(f"property {IN_USE!r} is reserved: a metalake is in use once created")
    try:
        call.acting().create_metalake(name, comment=comment, properties=props)
    except Forbidden:
        raise
    except ModelError as exc:
        info = call.ac.metalake()
        if info.exists and info.name == name:
            raise problems.already_exists(
                "MetalakeAlreadyExistsException", f"metalake {name!r} already exists"
            ) from None
        if info.exists:
            raise problems.unsupported(str(exc)) from None
        raise
    return {"code": 0, "metalake": metalake_json(call, created=True)}


def load_metalake(call: Call) -> Json:
    call.metalake()
    call.check("load_metalake", METALAKE)
    return {"code": 0, "metalake": metalake_json(call)}


#: Gravitino's metalake updates (``MetalakeUpdateRequest``'s ``@type``) pushdown applies.
UPDATES = ("rename", "updateComment", "setProperty", "removeProperty")


def alter_metalake(call: Call) -> Json:
    """``PUT /api/metalakes/{m}`` with ``{"updates": [...]}``: the owner renames the
    metalake, changes its comment and properties; all updates or none."""
    name = call.metalake()
    call.check("alter_metalake", METALAKE)
    updates = shapes.obj(call.body).get("updates")
    if not isinstance(updates, list) or not updates:
        raise problems.bad_request('"updates" must be a non-empty list of metalake updates')
    info = call.ac.metalake()
    state: dict[str, Any] = {"name": name, "comment": info.comment}
    props = dict(info.properties or {})
    for i, update in enumerate(updates):
        _apply(shapes.obj(update, f"updates[{i}]"), state, props)
    call.acting().alter_metalake(name, comment=state["comment"], properties=props, new_name=state["name"])
    return {"code": 0, "metalake": metalake_json(call)}


def _apply(update: Any, state: dict[str, Any], props: dict[str, str]) -> None:
    kind = update.get("@type")
    if kind not in UPDATES:
        raise problems.bad_request(f'"@type" {kind!r}: one of {", ".join(UPDATES)}')
    if kind == "rename":
        state["name"] = shapes.name(update.get("newName"), "newName")
    elif kind == "updateComment":
        state["comment"] = shapes.optional_text(update.get("newComment"), "newComment")
    else:
        key = shapes.name(update.get("property"), "property")
        if key == IN_USE:
            raise problems.bad_request(f"property {IN_USE!r} is reserved: the served metalake is in use")
        if kind == "setProperty":
            props[key] = shapes.properties({key: update.get("value")})[key]
        else:
            props.pop(key, None)


def drop_metalake(call: Call) -> Json:
    name = call.params["metalake"]
    force = shapes.flag(call.query.get("force"), "force")
    try:  # authorized before it is looked up (a stranger is refused whether it exists or not)
        call.metalake()
    except problems.Problem as exc:
        if exc.code == problems.NOT_FOUND:
            return {"code": 0, "dropped": False}
        raise
    # refused before "in use" is said: a caller who may not drop it learns nothing
    call.check("drop_metalake", METALAKE)
    if not force:  # Gravitino 1.3: a metalake in use is dropped only with force; this one always is
        raise problems.Problem(
            problems.IN_USE,
            "MetalakeInUseException",
            f"metalake {name!r} is in use: drop it with force=true (everything in it is dropped too)",
        )
    try:
        call.acting().drop_metalake(name, force=force)
    except Forbidden:
        raise
    except ModelError as exc:
        raise problems.Problem(
            problems.IN_USE, "MetalakeInUseException", f"{exc} (drop it with force=true)"
        ) from None
    return {"code": 0, "dropped": True}
