"""The metadata objects the access-control calls name: catalogs, schemas, tables, topics
and filesets, *registered* in the model (with their properties; which backend enforces a
catalog and where a fileset lies is the configuration's, :mod:`pushdown.reconcile.bindings`,
and a caller's property saying otherwise is refused). Nothing is created on a server:
pushdown pushes grants, it runs no DDL. What Gravitino keeps beside the name (a
catalog's type and provider, a comment, a table's columns, a fileset's location) is kept
in properties under ``pushdown.rest.`` and shown back in Gravitino's shapes.
"""

from __future__ import annotations

import json
from typing import Any

from pushdown.app.rest import problems, shapes
from pushdown.app.rest.call import Call, created
from pushdown.model.names import format_name
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType

Json = dict[str, Any]
HIDDEN = "pushdown.rest."
CATALOG_TYPES = ("relational", "fileset", "messaging", "model")


#: Gravitino's name of each kind: (path word, response key, list key, "no such" exception)
KINDS = {
    SecurableType.CATALOG: ("catalogs", "catalog", "NoSuchCatalogException", "CatalogAlreadyExistsException"),
    SecurableType.SCHEMA: ("schemas", "schema", "NoSuchSchemaException", "SchemaAlreadyExistsException"),
    SecurableType.TABLE: ("tables", "table", "NoSuchTableException", "TableAlreadyExistsException"),
    SecurableType.TOPIC: ("topics", "topic", "NoSuchTopicException", "TopicAlreadyExistsException"),
    SecurableType.FILESET: ("filesets", "fileset", "NoSuchFilesetException", "FilesetAlreadyExistsException"),
}
PARAMS = ("catalog", "schema", "name")


def _names(call: Call, depth: int) -> tuple[str, ...]:
    return tuple(call.params[p] for p in PARAMS[:depth])


def _ref(kind: SecurableType, names: tuple[str, ...]) -> ObjectRef:
    for part in names:
        shapes.name(part, kind.label)
    return ObjectRef(kind, names)


def _parent(call: Call, kind: SecurableType) -> ObjectRef | None:
    """The registered parent named by the path (404 when it is not registered)."""
    depth = kind.depth - 1
    if depth == 0:
        return None
    parent_kind = SecurableType.CATALOG if depth == 1 else SecurableType.SCHEMA
    return _ref(parent_kind, _names(call, depth))


def _require(call: Call, ref: ObjectRef) -> None:
    if ref not in call.model.objects:
        raise problems.not_found(KINDS[ref.type][2], f"{ref.type.label} {ref.name!r} does not exist")


def object_json(call: Call, ref: ObjectRef) -> Json:
    props = call.model.objects.get(ref, {})
    shown = {k: v for k, v in props.items() if not k.startswith(HIDDEN)}
    out: Json = {"name": ref.names[-1], "comment": props.get(HIDDEN + "comment"), "properties": shown}
    if ref.type is SecurableType.CATALOG:
        out["type"] = props.get(HIDDEN + "type", "relational")
        out["provider"] = props.get(HIDDEN + "provider", "")
    elif ref.type is SecurableType.TABLE:
        out["columns"] = json.loads(props.get(HIDDEN + "columns", "[]"))
        none = {"strategy": "none", "number": 0, "funcArgs": []}  # no distribution, partitioning, ...
        out.update({"distribution": none, "partitioning": [], "sortOrders": [], "indexes": []})
    elif ref.type is SecurableType.FILESET:
        out["type"] = props.get(HIDDEN + "type", "managed")
        location = props.get(HIDDEN + "storageLocation")
        out["storageLocation"] = location  # the shape before 1.0
        named = props.get(HIDDEN + "locationName", UNKNOWN_LOCATION)
        out["storageLocations"] = {named: location} if location is not None else {}
    out["audit"] = call.audit("object", str(ref))
    return out


def _identifier(call: Call, ref: ObjectRef) -> Json:
    return {"namespace": [call.params["metalake"], *ref.names[:-1]], "name": ref.names[-1]}


def list_objects(kind: SecurableType, listing: str) -> Any:
    def handler(call: Call) -> Json:
        call.metalake()
        parent = _parent(call, kind)
        call.check(listing, parent if parent is not None else METALAKE)
        if parent is not None:
            _require(call, parent)
        shown = call.listed(listing, parent if parent is not None else METALAKE)
        seen = sorted(o for o in shown if isinstance(o, ObjectRef) and o.type is kind)
        if kind is SecurableType.CATALOG and shapes.flag(call.query.get("details"), "details"):
            return {"code": 0, "catalogs": [object_json(call, o) for o in seen]}
        return {"code": 0, "identifiers": [_identifier(call, o) for o in seen]}

    return handler


def _extra(kind: SecurableType, body: Any) -> dict[str, str]:
    """What Gravitino keeps beside the name, as hidden properties."""
    out: dict[str, str] = {}
    comment = shapes.optional_text(body.get("comment"), "comment")
    if comment is not None:
        out["comment"] = comment
    if kind is SecurableType.CATALOG:
        ctype = body.get("type")
        if not isinstance(ctype, str) or ctype.lower() not in CATALOG_TYPES:
            raise problems.bad_request(f'"type" must be one of {", ".join(CATALOG_TYPES)} (any case)')
        out["type"] = ctype.lower()
        out["provider"] = shapes.optional_text(body.get("provider"), "provider") or ""
    elif kind is SecurableType.TABLE:
        columns = body.get("columns") or []
        if not isinstance(columns, list) or not all(
            isinstance(c, dict) and isinstance(c.get("name"), str) for c in columns
        ):
            raise problems.bad_request('"columns" must be a list of objects, each with a "name"')
        out["columns"] = json.dumps(columns, separators=(",", ":"))
    elif kind is SecurableType.FILESET:
        ftype = body.get("type", "managed")
        if not isinstance(ftype, str) or ftype.lower() not in ("managed", "external"):
            raise problems.bad_request('"type" must be managed or external')
        out["type"] = ftype.lower()
        out.update(_locations(body))
    return {HIDDEN + k: v for k, v in out.items()}


#: Gravitino's name for a fileset's one location when none is given (``LOCATION_NAME_UNKNOWN``).
UNKNOWN_LOCATION = "unknown"


def _locations(body: Any) -> dict[str, str]:
    """A fileset's location: 1.3's ``storageLocations`` ({name: location}, one entry) or
    the older ``storageLocation``; more than one named location is not supported (1006)."""
    single = shapes.optional_text(body.get("storageLocation"), "storageLocation")
    named = body.get("storageLocations")
    if named is None or named == {}:
        return {} if single is None else {"storageLocation": single}
    named = shapes.properties(named, "storageLocations")
    if len(named) > 1:
        raise problems.unsupported(
            "a fileset with more than one storage location is not supported by pushdown"
        )
    ((name, location),) = named.items()
    if single is not None and single != location:
        raise problems.bad_request('"storageLocation" and "storageLocations" name different locations')
    return {"storageLocation": location, "locationName": name}


def create_object(kind: SecurableType) -> Any:
    def handler(call: Call) -> Json:
        call.metalake()
        body = shapes.obj(call.body)
        name = shapes.name(body.get("name"), "name")
        props = shapes.properties(body.get("properties"))
        if any(k.startswith(HIDDEN) for k in props):
            raise problems.bad_request(f"property names beginning with {HIDDEN!r} are reserved")
        props.update(_extra(kind, body))
        ref = _ref(kind, (*_names(call, kind.depth - 1), name))
        parent = _parent(call, kind)
        call.check(f"create_{kind.value}", ref)  # before the parent is looked up (404)
        if parent is not None:
            _require(call, parent)
        created(
            call,
            lambda: call.acting().create_object(ref, properties=props),
            lambda: ref in call.model.objects,
            problems.already_exists(
                KINDS[kind][3], f"{kind.label} {format_name(ref.names)!r} already exists"
            ),
        )
        return {"code": 0, KINDS[kind][1]: object_json(call, ref)}

    return handler


def load_object(kind: SecurableType) -> Any:
    def handler(call: Call) -> Json:
        call.metalake()
        ref = _ref(kind, _names(call, kind.depth))
        call.check(f"load_{kind.value}", ref)
        _require(call, ref)
        return {"code": 0, KINDS[kind][1]: object_json(call, ref)}

    return handler


#: The query flag that allows dropping an object with objects below it.
CASCADE = {SecurableType.CATALOG: "force", SecurableType.SCHEMA: "cascade"}


def drop_object(kind: SecurableType) -> Any:
    def handler(call: Call) -> Json:
        call.metalake()
        ref = _ref(kind, _names(call, kind.depth))
        call.check(f"drop_{kind.value}", ref)
        if ref not in call.model.objects:
            return {"code": 0, "dropped": False}
        flag = CASCADE.get(kind)
        if flag is not None and call.model.kids.get(ref) and not shapes.flag(call.query.get(flag), flag):
            raise problems.not_empty(
                f"NonEmpty{kind.value.title()}Exception",
                f"{kind.label} {ref.name!r} is not empty; drop it with {flag}=true",
            )
        call.acting().drop_object(ref)
        return {"code": 0, "dropped": True}

    return handler
