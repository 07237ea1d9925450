"""Hand-made state that can void what pushdown writes, found in what a read brings back. Pure.

- **Policies pushdown merges into** (a hand-made policy on one of pushdown's resource sets:
  Ranger allows one policy per resource set, error 3010): *deny exceptions* let their
  principals (a group as the enforcing host resolves it, ``{USER}``…) escape every deny
  item of the policy; a policy *disabled*, with *policy conditions* or a *validity
  schedule* holds its deny items only some of the time or never; *override priority*
  makes its allow items beat deny items of other policies. A Hive database with such a
  policy on one of pushdown's resource sets is compiled without deny items (per-table
  allow items instead, as when the service definition disables deny items): exact where
  it can be, narrower where not (tables created later wait for the next sync), reported.
  *Allow exceptions* only cut pushdown's allows (narrower): reported.
- **Roles**: a role nested by hand inside one of pushdown's roles (its members get that
  role's access) is removed by the next write of the role and reported; a hand-made role
  holding one of pushdown's roles, or model users, reaches them through hand-made items:
  reported like any other hand-made access path.
- **Security zones**: Ranger evaluates a resource inside a zone with that zone's policies
  only. pushdown writes unzoned policies, so inside a zone its allows and its deny items are
  both out of effect (its allows: narrower); a zone holding a resource pushdown manages and
  every zoned allow reaching the model's principals are reported.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from pushdown_ranger.facts import PolicyFact, Resource, describe
from pushdown_ranger.readback import bypasses, resource_key

Json = dict[str, Any]


def voiding(policy: Json) -> str | None:
    """Why deny items in ``policy`` may not hold, or its allow items beat other policies' deny items."""
    if policy.get("isEnabled") is False:
        return "it is disabled"
    if policy.get("denyExceptions"):
        return "its deny exceptions let their principals escape its deny items"
    if int(policy.get("policyPriority") or 0) != 0:
        return "its override priority makes its allow items beat deny items elsewhere"
    if policy.get("validitySchedules"):
        return "its validity schedule holds its items only some of the time"
    if policy.get("conditions"):
        return "its policy conditions hold its items only some of the time"
    return None


def _shaped_database(key: tuple[Resource, ...]) -> str | None:
    """The database of a resource set shaped like one pushdown writes in a Hive service:
    ``database=d``, or ``database=d, table=<one value>, column=*``."""
    names = {name for name, _, _ in key}
    values = {name: v for name, v, _ in key}
    if names == {"database"} or (names == {"database", "table", "column"} and values["column"] == ("*",)):
        if all(len(v) == 1 for v in values.values()):
            return values["database"][0]
    return None


def voided_databases(policies: Mapping[tuple[str, Any], Json], hive_service: str) -> dict[str, str]:
    """Hive databases where a hand-made policy voids deny items: database (or a pattern of
    database names: ``*``, ``cr*``) -> the reason, in words. A policy on one of pushdown's
    resource sets voids them in every way :func:`voiding` names; a policy with override
    priority on any other resource set (several databases or tables, a wildcard, excludes,
    some columns) beats deny items on every database its resources may match."""
    out: dict[str, str] = {}
    for (service, key), policy in sorted(policies.items(), key=lambda kv: str(kv[0])):
        if service != hive_service:
            continue
        database = _shaped_database(key)
        why = voiding(policy)
        if why is None:
            continue
        where = f"policy {policy.get('name')!r} ({service}:{describe(key)}): {why}"
        if database is not None:
            out.setdefault(database, where)
        elif int(policy.get("policyPriority") or 0) != 0:
            for pattern in _database_patterns(policy):
                out.setdefault(pattern, where)
    return out


def _database_patterns(policy: Json) -> tuple[str, ...]:
    spec = (policy.get("resources") or {}).get("database") or {}
    values = tuple(str(v) for v in spec.get("values") or ())
    if spec.get("isExcludes") or not values or policy.get("additionalResources"):
        return ("*",)
    return values


def is_voided(database: str, voided: Iterable[str]) -> bool:
    """Whether a key of :func:`voided_databases` may match ``database``."""
    return any(may_overlap((database,), (pattern,)) for pattern in voided)


def exception_findings(
    policies: Iterable[Json], ours: Callable[[str], bool], facts: Iterable[PolicyFact]
) -> list[str]:
    """Allow exceptions in a policy holding pushdown's allow items: they cut those (narrower)."""
    held = {(f.service, f.resources) for f in facts if f.allow}
    out = []
    for policy in policies:
        key = (str(policy.get("service")), resource_key(policy))
        if key in held and policy.get("allowExceptions"):
            who = sorted(
                {
                    f"{kind[:-1]} {name}"
                    for item in policy["allowExceptions"]
                    for kind in ("users", "groups", "roles")
                    for name in item.get(kind) or ()
                }
            )
            out.append(
                f"policy {policy.get('name')!r} ({key[0]}:{describe(key[1])}) has allow exceptions: "
                f"they cut pushdown's allow items there for {', '.join(who) or 'nobody'} (narrower)"
            )
    return out


def shadow_findings(
    policy: Json, ours: Callable[[str], bool], users: AbstractSet[str], groups: AbstractSet[str]
) -> list[str]:
    """A second policy on the resources of one pushdown writes in (another priority, or
    disabled): pushdown never writes it; its items for the model's principals are reported."""
    where = f"policy {policy.get('name')!r} ({policy.get('service')}:{describe(resource_key(policy))})"
    out = list(bypasses(policy, users, groups))
    for field in ("policyItems", "denyPolicyItems", "allowExceptions", "denyExceptions"):
        for item in policy.get(field) or ():
            named = sorted(str(r) for r in item.get("roles") or () if ours(str(r)))
            if named:
                out.append(f"{where}: {field} names pushdown's role(s) {', '.join(named)}, outside pushdown")
    return out


def voided_findings(voided: Mapping[str, str], deny_off: bool) -> list[str]:
    if deny_off:
        return []
    return [
        f"database {d}: {why}; pushdown writes no deny items in this database "
        "(per-table allow items instead of the every-table one where a table differs; narrower)"
        for d, why in sorted(voided.items())
    ]


def role_findings(roles: Iterable[Json], ours: Callable[[str], bool]) -> list[str]:
    """Roles nested by hand in pushdown's roles (removed), and pushdown's roles nested in others."""
    out = []
    for role in roles:
        name = str(role.get("name"))
        nested = sorted(str(m.get("name")) for m in role.get("roles") or ())
        admins = sorted(
            str(m.get("name"))
            for k in ("users", "groups", "roles")
            for m in role.get(k) or ()
            if m.get("isAdmin")
        )
        if ours(name) and admins:
            out.append(
                f"role {name!r} has admin member(s) {', '.join(admins)} set outside pushdown: a role "
                "admin may grant the role to anyone; reset"
            )
        if ours(name) and nested:
            out.append(
                f"role {name!r} has member role(s) {', '.join(nested)} made outside pushdown: "
                "their members would get its access; removed"
            )
        elif not ours(name):
            held = [r for r in nested if ours(r)]
            if held:
                out.append(
                    f"role {name!r} (not pushdown's) has pushdown's role(s) {', '.join(held)} as members: "
                    "their members get whatever names it, outside pushdown"
                )
    return out


def role_reach(
    roles: Iterable[Json], users: AbstractSet[str], groups: AbstractSet[str], ours: Callable[[str], bool]
) -> dict[str, list[str]]:
    """Hand-made roles and whom of the model they reach (users, groups, pushdown's roles),
    through nested roles too."""
    by_name = {str(role.get("name")): role for role in roles}
    # the members of the roles walked only (hand-made ones, and what they nest): not of
    # every one of pushdown's roles
    members: dict[str, tuple[list[str], list[str], list[str]]] = {}

    def members_of(name: str) -> tuple[list[str], list[str], list[str]]:
        found = members.get(name)
        if found is None:
            role = by_name.get(name, {})
            found = members[name] = (
                [str(m.get("name")) for m in role.get("users") or ()],
                [str(m.get("name")) for m in role.get("groups") or ()],
                [str(m.get("name")) for m in role.get("roles") or ()],
            )
        return found

    out: dict[str, list[str]] = {}
    for name in by_name:
        if ours(name):
            continue
        seen, todo, reached = {name}, [name], set()
        while todo:
            u, g, r = members_of(todo.pop())
            reached |= {f"user {x}" for x in u if x in users}
            reached |= {f"group {x}" for x in g if x in groups or x == "public"}
            reached |= {f"role {x}" for x in r if ours(x)}
            for x in r:
                if x not in seen and not ours(x):
                    seen.add(x)
                    todo.append(x)
        if reached:
            out[name] = sorted(reached)
    return out


def role_bypasses(policy: Json, reach: Mapping[str, list[str]]) -> list[str]:
    """Allow items naming a hand-made role that reaches the model's principals."""
    out = []
    for item in policy.get("policyItems") or ():
        hit = [f"role {r} ({', '.join(reach[r])})" for r in item.get("roles") or () if r in reach]
        if hit:
            accesses = ",".join(sorted(str(a.get("type")) for a in item.get("accesses") or ()))
            where = describe(resource_key(policy))
            out.append(
                f"policy {policy.get('name')!r} ({policy.get('service')}:{where}) allows {accesses} "
                f"to {', '.join(hit)}, outside pushdown"
            )
    return out


def may_overlap(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether two lists of Ranger resource values may match one name (wildcards either
    way, one a prefix of the other: a path above or below; any case)."""
    for x in a:
        for y in b:
            x1, y1 = x.lower(), y.lower()
            if (
                fnmatch.fnmatchcase(x1, y1)
                or fnmatch.fnmatchcase(y1, x1)
                or x1.startswith(y1)
                or y1.startswith(x1)
            ):
                return True
    return False


def zone_findings(
    zones: Iterable[Json],
    zoned: Iterable[Json],
    facts: Iterable[PolicyFact],
    users: AbstractSet[str],
    groups: AbstractSet[str],
    ours: Callable[[str], bool],
) -> list[str]:
    """Zones over resources pushdown writes for, and zoned items reaching the model's principals."""
    out = []
    held = [f for f in facts]
    for zone in zones:
        name = zone.get("name")
        for service, spec in sorted((zone.get("services") or {}).items()):
            for resources in (spec or {}).get("resources") or ():
                hit = sorted(
                    {
                        f.describe_resources()
                        for f in held
                        if f.service == service
                        and all(
                            may_overlap(v, tuple(str(x) for x in resources.get(k) or ("*",)))
                            for k, v, _ in f.resources
                            if k in resources
                        )
                    }
                )
                if hit:
                    out.append(
                        f"security zone {name!r} holds {service}:{describe(_as_key(resources))}, "
                        f"where pushdown writes {'; '.join(hit)}: Ranger evaluates it with the zone's "
                        "policies only, so "
                        "pushdown's allow and deny items do not apply there (its allows: narrower; "
                        "what the zone allows is reported)"
                    )
    for policy in zoned:
        zone_name = policy.get("zoneName")
        for text in bypasses(policy, users, groups):
            out.append(f"in security zone {zone_name!r}: {text}")
        for field in ("policyItems", "denyPolicyItems", "allowExceptions", "denyExceptions"):
            for item in policy.get(field) or ():
                named = sorted(str(r) for r in item.get("roles") or () if ours(str(r)))
                if named and field == "policyItems":
                    out.append(
                        f"in security zone {zone_name!r}: policy {policy.get('name')!r} allows "
                        f"pushdown's role(s) {', '.join(named)}, outside pushdown"
                    )
    return out


def _as_key(resources: Mapping[str, Any]) -> tuple[Resource, ...]:
    return tuple(sorted((str(k), tuple(str(v) for v in vals), False) for k, vals in resources.items()))
