"""CDAP's policy table (reference 004) over the model's securables.

CDAP's entities are mapped onto the model's objects: the instance is the metalake, a
namespace a catalog, an application a schema (``NS.APP``), and a dataset, stream,
artifact or program a table (``NS.GROUP.NAME``). The READ / WRITE / ADMIN / EXECUTE a user
holds on an entity are read off pushdown's evaluator on the mapped object (never more):

- READ: the model's load operation on it (load catalog / schema / table);
- WRITE: on a container, creating inside it (create schema / create table); on a leaf,
  changing it (alter table, that is MODIFY_TABLE);
- ADMIN: dropping it (ownership);
- EXECUTE: on a program, changing its table (no model privilege runs a program).

The CDAP decision is then taken by the shared dialect evaluator on these privileges.
"""

from __future__ import annotations

from pushdown.decide.evaluator import Evaluator
from pushdown.dialects.cdap import DIALECT, OPERATIONS
from pushdown.dialects.data import Need
from pushdown.dialects.evaluate import DGrant, State
from pushdown.errors import ModelError
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model

_FUTURE = "(new)"
_LEAVES = ("DATASET", "STREAM", "ARTIFACT", "PROGRAM")
_KIND = {
    SecurableType.METALAKE: "INSTANCE",
    SecurableType.CATALOG: "NAMESPACE",
    SecurableType.SCHEMA: "APPLICATION",
    SecurableType.TABLE: "DATASET",
}
_CHECKS: dict[SecurableType, dict[str, tuple[str, SecurableType | None]]] = {
    SecurableType.METALAKE: {
        "READ": ("load_metalake", None),
        "WRITE": ("create_catalog", SecurableType.CATALOG),
        "ADMIN": ("alter_metalake", None),
    },
    SecurableType.CATALOG: {
        "READ": ("load_catalog", None),
        "WRITE": ("create_schema", SecurableType.SCHEMA),
        "ADMIN": ("drop_catalog", None),
    },
    SecurableType.SCHEMA: {
        "READ": ("load_schema", None),
        "WRITE": ("create_table", SecurableType.TABLE),
        "ADMIN": ("drop_schema", None),
    },
    SecurableType.TABLE: {
        "READ": ("load_table", None),
        "WRITE": ("alter_table", None),
        "ADMIN": ("drop_table", None),
        "EXECUTE": ("alter_table", None),
    },
}


def model_object(entity_type: str, name: str) -> ObjectRef:
    kind = entity_type.upper()
    if kind == "INSTANCE":
        return ObjectRef.of("metalake")
    mtype = {"NAMESPACE": "catalog", "APPLICATION": "schema"}.get(kind, "table" if kind in _LEAVES else "")
    if not mtype:
        raise ModelError(
            f"unknown CDAP entity {entity_type!r}; known: {', '.join(DIALECT.securables).lower()}"
        )
    return ObjectRef.of(mtype, name)


def privileges(model: Model, user: str, obj: ObjectRef) -> list[str]:
    """The CDAP privileges the model gives ``user`` on the entity mapped to ``obj``."""
    ev = Evaluator(model)
    out = []
    for privilege, (operation, inside) in _CHECKS[obj.type].items():
        target = obj if inside is None else ObjectRef(inside, (*obj.names, _FUTURE))
        if ev.authorize(user, operation, target, explain=False).allowed:
            out.append(privilege)
    return out


def privilege_lines(model: Model) -> list[str]:
    lines = ["# CDAP privileges the model gives each user, per entity (reference 004)"]
    objects = [ObjectRef.of("metalake"), *sorted(o for o in model.objects if o.type in _CHECKS)]
    for user in sorted(model.users):
        for obj in objects:
            held = privileges(model, user, obj)
            if held:
                kind = _KIND[obj.type].lower() + (
                    "/stream/artifact/program" if obj.type is SecurableType.TABLE else ""
                )
                lines.append(f"user {user}: {kind} {obj.name or model.metalake}: {' '.join(held)}")
    return lines


def explain(model: Model, user: str, operation: str, entity: str) -> tuple[bool, list[str]]:
    op = operation.strip().lower()
    if op not in OPERATIONS:
        raise ModelError(f"unknown CDAP operation {operation!r}; e.g. {', '.join(list(OPERATIONS)[:4])}, …")
    kind = op.split()[0].upper()
    obj = model_object(kind, entity)
    grants: set[DGrant] = set()
    nodes = {"target": obj, "NAMESPACE": obj.path[1] if len(obj.path) > 1 else None, "INSTANCE": obj.path[0]}
    lines = [f"{user} {op} {kind.lower()} {entity} (model: {obj})"]
    for need in OPERATIONS[op]:
        node = nodes.get(need.at)
        if node is None:
            lines.append(f"  needs {'/'.join(need.privileges)} on the {need.at.lower()}: no such entity")
            continue
        held = privileges(model, user, node)
        where = _KIND[node.type]
        grants |= {DGrant(user, p, where, node.names) for p in held}
        ok = any(p in held for p in need.privileges)
        lines.append(
            f"  {'ok ' if ok else 'NO '} needs {'/'.join(need.privileges)} on {where.lower()} "
            f"{node.name or model.metalake}; the model gives {' '.join(held) or 'nothing'}"
        )
    state = State(DIALECT, grants)

    def met(need: Need) -> bool:
        node = nodes.get(need.at)
        return node is not None and any(
            state.holds(frozenset({user}), p, (_KIND[node.type], node.names)) for p in need.privileges
        )

    allowed = all(met(need) for need in OPERATIONS[op])
    lines.append("allowed" if allowed else "denied")
    return allowed, lines
