"""Policy and role checks of the stand-in, after Ranger's RangerPolicyValidator / RangerRoleValidator.

Each check raises :class:`~pushdown_lab.ranger_standin.errors.RangerError` with Ranger's error code
and wording: a missing or conflicting name, an unknown service, resources that fit none of the
service definition's hierarchies, an unknown access type, a policy with neither items nor
audit (3008), and a second policy on the same resources (3010, compared by Ranger's
resource signature).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pushdown_lab.ranger_standin.errors import validation_failure

__all__ = ["ITEM_KINDS", "check_policy", "check_role", "hierarchies", "resource_signature"]

ITEM_KINDS = (
    "policyItems",
    "denyPolicyItems",
    "allowExceptions",
    "denyExceptions",
    "dataMaskPolicyItems",
    "rowFilterPolicyItems",
)


def hierarchies(service_def: dict[str, Any]) -> list[list[str]]:
    """Every resource hierarchy of an access policy, as Ranger's RangerServiceDefHelper lists them:
    each root-to-leaf chain, and each of its prefixes that ends at a resource marked ``isValidLeaf``."""
    defs = service_def.get("resources") or []
    leaf_ok = {r["name"] for r in defs if r.get("isValidLeaf") is True}
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for rdef in defs:
        parent = rdef.get("parent") or ""
        (children.setdefault(parent, []) if parent else roots).append(rdef["name"])
    chains: list[list[str]] = []

    def walk(chain: list[str]) -> None:
        below = children.get(chain[-1], [])
        if not below:
            chains.append(chain)
            chains.extend(chain[: i + 1] for i in range(len(chain) - 1) if chain[i] in leaf_ok)
        for name in below:
            walk([*chain, name])

    for root in roots:
        walk([root])
    unique: list[list[str]] = []
    for chain in chains:
        if chain not in unique:
            unique.append(chain)
    return unique


def resource_signature(policy: dict[str, Any]) -> str:
    """What makes two policies 'on the same resources' for Ranger (its resource signature)."""
    parts = []
    for name in sorted(policy.get("resources") or {}):
        res = policy["resources"][name] or {}
        values = sorted(res.get("values") or [])
        parts.append(f"{name}={values},{bool(res.get('isExcludes'))},{bool(res.get('isRecursive'))}")
    for more in policy.get("additionalResources") or []:  # Ranger 2.5: part of the signature
        parts.append(json.dumps(more, sort_keys=True, default=str))
    extra = [
        str(policy.get("policyType") or 0),
        str(policy.get("policyPriority") or 0),
        str(policy.get("zoneName") or ""),
        str(policy.get("conditions") or ""),
        str(policy.get("validitySchedules") or ""),
    ]
    if policy.get("isEnabled") is False:
        extra.append(str(policy.get("guid")))
    return ";".join(parts + extra)


def check_policy(policy: dict[str, Any], service_def: dict[str, Any]) -> None:
    """The service-definition checks of one policy: resources and access types."""
    if not str(policy.get("name") or "").strip():
        raise validation_failure(3002, "Internal error: missing field[name]", "name", "missing")
    _check_items_or_audit(policy)
    _check_resources(policy.get("resources") or {}, service_def, str(policy.get("name")))
    _check_access_types(policy, service_def)


#: the item lists Ranger counts for a policy of each type (0 access, 1 masking, 2 row filter)
_COUNTED = {1: ("dataMaskPolicyItems",), 2: ("rowFilterPolicyItems",)}


def _check_items_or_audit(policy: dict[str, Any]) -> None:
    """Ranger refuses a policy with audit turned off and no item that could match (an access
    policy's allow and deny items; exceptions are not counted): it would do nothing."""
    counted = _COUNTED.get(int(policy.get("policyType") or 0), ("policyItems", "denyPolicyItems"))
    if policy.get("isAuditEnabled") is False and not any(policy.get(kind) for kind in counted):
        raise validation_failure(
            3008,
            "at least one policy item must be specified if audit isn't enabled",
            "policy items",
            "missing",
        )


def _check_resources(resources: dict[str, Any], service_def: dict[str, Any], name: str) -> None:
    if not resources:
        raise validation_failure(
            3026,
            "Resource list was empty or contains null. At least one resource must be specified",
            "resources",
            "missing",
        )
    keys = set(resources)
    chains = hierarchies(service_def)
    fitting = [chain for chain in chains if keys <= set(chain)]
    sets = "[" + ", ".join("[" + ", ".join(chain) + "]" for chain in chains) + "]"
    if not fitting:
        raise validation_failure(
            3011,
            f"Invalid resources specified. {service_def['name']} policy "
            f"can specify values for one of the following resource sets: {sets}",
            "policy resources",
        )
    mandatory = {r["name"] for r in service_def.get("resources") or [] if r.get("mandatory")}
    if not any(mandatory & set(chain) <= keys for chain in fitting):
        raise validation_failure(
            3012,
            f"Invalid resources specified. {service_def['name']} policy "
            f"must specify values for one of the following resource sets: {sets}",
            "policy resources",
            "missing",
        )
    defs = {r["name"]: r for r in service_def.get("resources") or []}
    for key, res in resources.items():
        _check_resource_values(key, res or {}, defs[key])


def _check_resource_values(key: str, res: dict[str, Any], rdef: dict[str, Any]) -> None:
    values = res.get("values")
    if not isinstance(values, list) or not values or any(not isinstance(v, str) or v == "" for v in values):
        raise validation_failure(
            3018,
            f"Invalid resource specified. A value of [{values}] is not valid for resource [{key}]",
            "resource-values",
        )
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise validation_failure(
                3056,
                f"Values for the resource={key} contained a duplicate "
                f"value={value}. Ensure all values for a resource are unique",
                "resource-values",
            )
        seen.add(value)
    if res.get("isExcludes") and rdef.get("excludesSupported") is False:
        raise validation_failure(3015, f"Excludes option not supported: resource-name=[{key}]", "isExcludes")
    if res.get("isRecursive") and not rdef.get("recursiveSupported"):
        raise validation_failure(
            3017, f"Recursive option not supported: resource-name=[{key}].", "isRecursive"
        )


def _check_access_types(policy: dict[str, Any], service_def: dict[str, Any]) -> None:
    valid = [a["name"] for a in service_def.get("accessTypes") or []]
    for kind in ITEM_KINDS:
        for item in policy.get(kind) or []:
            for access in item.get("accesses") or []:
                kind_name = access.get("type")
                if not kind_name:
                    raise validation_failure(
                        4010,
                        "policy items access object has empty or null values for type",
                        "policy item access type",
                        "missing",
                    )
                if kind_name.lower() not in valid:
                    raise validation_failure(
                        3022,
                        f"Invalid access type: access type=[{kind_name}], valid access types=[{valid}]",
                        "policy item access type",
                    )


def check_role(role: dict[str, Any]) -> None:
    """A role needs a name; its members are name/isAdmin pairs."""
    name = str(role.get("name") or "").strip()
    if not name:
        raise validation_failure(
            4003, "Internal error: RangerRole name passed in was null/empty", "name", "missing"
        )
    for kind in ("users", "groups", "roles"):
        _check_members(role.get(kind) or [], kind)


def _check_members(members: Iterable[Any], kind: str) -> None:
    for member in members:
        if not isinstance(member, dict) or not str(member.get("name") or "").strip():
            raise validation_failure(4002, f"Internal error: missing field[{kind}]", kind, "missing")
