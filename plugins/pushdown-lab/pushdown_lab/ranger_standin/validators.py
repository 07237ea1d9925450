"""Policy and role checks of the stand-in, after Ranger's RangerPolicyValidator / RangerRoleValidator.

Each check raises :class:`~pushdown_lab.ranger_standin.errors.RangerError` with Ranger's error code
and wording: a missing or conflicting name, an unknown service, a priority other than normal or
override (3030), a service type other than the service's (4009), an update moving the policy to
another service (3027), changing its type (3028) or its zone (3032), a policy with neither
items nor audit (3008), deny items or deny exceptions in a policy with ``isDenyAllElse``
(3049), the items and validity schedules :mod:`~pushdown_lab.ranger_standin.itemchecks` refuses,
resources that fit none of the service definition's hierarchies (3011/3012, 3024/3025 when it
has one), blank resource values (dropped; none left: 3026), an unknown access type (3022, also
one a row-filter or masking policy's definition does not list), and a second policy on the same
resources (3010, compared by Ranger's resource signature).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from pushdown_lab.ranger_standin.errors import validation_failure
from pushdown_lab.ranger_standin.itemchecks import check_items, check_validity_schedules

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


def check_policy(
    policy: dict[str, Any], service_def: dict[str, Any], existing: dict[str, Any] | None = None
) -> None:
    """The checks of one policy against its service definition (and, on an update, the policy
    it replaces, ``existing``), in Ranger's order; the first refusal is raised."""
    priority = policy.get("policyPriority")
    if priority is not None and priority not in (0, 1):
        raise validation_failure(3030, "Invalid priority value", "policyPriority")
    stype = policy.get("serviceType")
    if stype and str(stype).lower() != str(service_def["name"]).lower():
        raise validation_failure(
            4009,
            f" Invalid service type [{stype}] provided for service [{policy.get('service')}]",
            "service type",
        )
    if not str(policy.get("name") or "").strip():
        raise validation_failure(3002, "Internal error: missing field[name]", "name", "missing")
    if existing is not None:
        _check_update(policy, existing)
    _check_items_or_audit(policy)
    if policy.get("isDenyAllElse") is True and (
        policy.get("denyPolicyItems") or policy.get("denyExceptions")
    ):
        raise validation_failure(
            3049,
            "Deny or deny-exceptions are not supported if policy has isDenyAllElse flag set to true",
            "policy items",
            "",
        )
    check_items(policy, ITEM_KINDS, _access_types(service_def))
    check_validity_schedules(policy)
    _check_resources(policy.get("resources") or {}, service_def, str(policy.get("name")))
    _check_access_types(policy, service_def)


def _check_update(policy: dict[str, Any], existing: dict[str, Any]) -> None:
    """What an update may not change: the service (3027), the type (3028), the zone (3032)."""
    pid = existing.get("id")
    if str(existing.get("service") or "").lower() != str(policy.get("service") or "").lower():
        raise validation_failure(
            3027,
            f"attempt to move policy id={pid} from service={existing.get('service')} "
            f"to service={policy.get('service')} is not allowed",
            "service name",
        )
    old_type, new_type = int(existing.get("policyType") or 0), int(policy.get("policyType") or 0)
    if old_type != new_type:
        raise validation_failure(
            3028,
            f"attempt to change type of policy id={pid} from type={old_type} "
            f"to type={new_type} is not allowed",
            "policy type",
        )
    old_zone, new_zone = existing.get("zoneName") or "", policy.get("zoneName") or ""
    if old_zone != new_zone:
        raise validation_failure(
            3032,
            f"Update of Zone name from={old_zone or None} to={new_zone or None} in policy is not supported",
            "zoneName",
        )


def _access_types(service_def: dict[str, Any]) -> list[str]:
    """The access types an item may name (lower case): the definition's, and its markers."""
    kinds = [*(service_def.get("accessTypes") or []), *(service_def.get("markerAccessTypes") or [])]
    return [str(a["name"]).lower() for a in kinds if a and str(a.get("name") or "").strip()]


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
    keys = set(resources)
    chains = hierarchies(service_def)
    fitting = [chain for chain in chains if keys <= set(chain)]
    sets = "[" + ", ".join("[" + ", ".join(chain) + "]" for chain in chains) + "]"
    if not fitting:
        code, words = (3024, "the following resources") if len(chains) == 1 else (3011, None)
        raise validation_failure(
            code,
            f"Invalid resources specified. {service_def['name']} policy "
            f"can specify values for {words or 'one of the following resource sets'}: {sets}",
            "policy resources",
        )
    mandatory = {r["name"] for r in service_def.get("resources") or [] if r.get("mandatory")}
    if not any(mandatory & set(chain) <= keys for chain in fitting):
        code, words = (3025, "the following resources") if len(fitting) == 1 else (3012, None)
        raise validation_failure(
            code,
            f"Invalid resources specified. {service_def['name']} policy "
            f"must specify values for {words or 'one of the following resource sets'}: {sets}",
            "policy resources",
            "missing",
        )
    defs = {r["name"]: r for r in service_def.get("resources") or []}
    for key, res in resources.items():
        _check_resource_values(key, res or {}, defs[key])


def _check_resource_values(key: str, res: dict[str, Any], rdef: dict[str, Any]) -> None:
    values = res.get("values")
    if not isinstance(values, list) or any(not isinstance(v, str) for v in values):
        raise validation_failure(
            3018,
            f"Invalid resource specified. A value of [{values}] is not valid for resource [{key}]",
            "resource-values",
        )
    values = res["values"] = [v for v in values if v.strip()]  # Ranger drops blank values
    if not values:
        raise validation_failure(
            3026,
            "Resource list was empty or contains null. At least one resource must be specified",
            "resource-values",
            "missing",
        )
    regex = str(rdef.get("validationRegEx") or "")
    for value in values if regex.strip() else ():
        if re.fullmatch(regex, value) is None:
            raise validation_failure(
                3018,
                f"Invalid resource specified. A value of [{value}] is not valid for resource [{key}]",
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
    if res.get("isExcludes") and rdef.get("excludesSupported") is not True:
        raise validation_failure(3015, f"Excludes option not supported: resource-name=[{key}]", "isExcludes")
    if res.get("isRecursive") and not rdef.get("recursiveSupported"):
        raise validation_failure(
            3017, f"Recursive option not supported: resource-name=[{key}].", "isRecursive"
        )


def _check_access_types(policy: dict[str, Any], service_def: dict[str, Any]) -> None:
    """A row-filter (masking) policy's items name only the row-filter (masking) definition's
    access types, or a marker implying one of them (3022)."""
    kind, field, words = {
        1: ("dataMaskDef", "dataMaskPolicyItems", "data masking"),
        2: ("rowFilterDef", "rowFilterPolicyItems", "row filter"),
    }.get(int(policy.get("policyType") or 0), ("", "", ""))
    if not kind:
        return
    valid = [str(a["name"]).lower() for a in (service_def.get(kind) or {}).get("accessTypes") or []]
    for marker in service_def.get("markerAccessTypes") or [] if valid else []:
        if set(marker.get("impliedGrants") or ()) & set(valid):
            valid.append(str(marker["name"]))
    for item in policy.get(field) or []:
        for access in item.get("accesses") or []:
            if str(access.get("type")).lower() not in valid:
                raise validation_failure(
                    3022,
                    f"Invalid access type: access type=[{access.get('type')}], valid access types=[{valid}]",
                    f"{words} policy item access type",
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
