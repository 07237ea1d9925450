"""A model written as a spec (today's YAML format, see docs/spec.md), with a report as comments."""

from __future__ import annotations

from typing import Any

import yaml

from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model


def spec_of(model: Model) -> dict[str, Any]:
    out: dict[str, Any] = {"metalake": model.metalake}
    if model.users:
        out["users"] = sorted(model.users)
    if model.groups:
        out["groups"] = {g: sorted(m) for g, m in sorted(model.groups.items())}
    catalogs = _catalogs(model)
    if catalogs:
        out["catalogs"] = catalogs
    roles = {name: _role(model, name) for name in sorted(model.roles)}
    if roles:
        out["roles"] = roles
    return out


def _owned(model: Model, obj: ObjectRef, body: dict[str, Any]) -> dict[str, Any]:
    owner = model.owners.get(obj)
    return {"owner": owner, **body} if owner else body


def _catalogs(model: Model) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for cat in sorted(o for o in model.objects if o.type is SecurableType.CATALOG):
        schemas: dict[str, Any] = {}
        for sch in sorted(model.children(cat)):
            tables = sorted(t for t in model.children(sch) if t.type is SecurableType.TABLE)
            body: dict[str, Any] = {}
            if tables:
                if any(t in model.owners for t in tables):
                    body["tables"] = {t.names[-1]: _owned(model, t, {}) for t in tables}
                else:
                    body["tables"] = [t.names[-1] for t in tables]
            schemas[sch.names[-1]] = _owned(model, sch, body)
        out[cat.names[0]] = _owned(model, cat, {"schemas": schemas} if schemas else {})
    return out


def _role(model: Model, name: str) -> dict[str, Any]:
    by_obj: dict[ObjectRef, dict[str, list[str]]] = {}
    for g in sorted(model.roles[name]):
        key = "allow" if g.condition is Condition.ALLOW else "deny"
        by_obj.setdefault(g.object, {}).setdefault(key, []).append(g.privilege.value)
    grants = [{"on": str(obj), **lists} for obj, lists in sorted(by_obj.items())]
    holders = [f"user {u}" for u in sorted(model.role_users.get(name, ()))]
    holders += [f"group {g}" for g in sorted(model.role_groups.get(name, ()))]
    body: dict[str, Any] = {"grants": grants}
    if holders:
        body["to"] = holders
    return _owned(model, ObjectRef.of("role", (name,)), body)


def spec_yaml(model: Model, report: list[str], source: str) -> str:
    head = [f"# imported from {source}"]
    head += [f"# {line}" for line in report] or ["# nothing left out"]
    body = yaml.safe_dump(spec_of(model), sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(head) + "\n" + body
