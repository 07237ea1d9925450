"""Hand-made policies with override priority in the topic and fileset services (issue 23,
N1). Pure.

Ranger evaluates override-priority policies first, and their allow items beat every deny
item of normal priority on whatever their resources match. In Hive such a policy voids the
deny items of every database it may match (:func:`~pushdown_ranger.handmade.voided_databases`);
in Kafka and HDFS the same holds for any shape (``topic=*``, a recursive ``/lake``,
excludes), so a service where one may match pushdown's resources is compiled without deny
items, and every such policy with allow items is a finding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pushdown_ranger.facts import PolicyFact, Resource, describe
from pushdown_ranger.handmade import may_overlap

Json = dict[str, Any]


def overriding_policies(
    policies: Mapping[tuple[str, Any], Json], hive_service: str
) -> frozenset[tuple[str, Any]]:
    """(service, resource set) of every policy outside the Hive service whose override
    priority makes its allow items beat deny items on whatever its resources match (any
    shape: ``topic=*``, a recursive ``/lake``, excludes)."""
    return frozenset(
        key
        for key, policy in policies.items()
        if key[0] != hive_service
        and policy.get("isEnabled") is not False
        and int(policy.get("policyPriority") or 0) != 0
    )


def overridden(service: str, resources: tuple[Resource, ...], overriding: Iterable[tuple[str, Any]]) -> bool:
    """Whether an override-priority policy of ``overriding`` may match ``resources`` of ``service``
    (compared as :func:`may_overlap` does: wildcards and paths above or below, any case;
    excludes as if they matched)."""
    mine = {name: values for name, values, _ in resources}
    for other, key in overriding:
        if other != service:
            continue
        if all(
            excludes or name not in mine or may_overlap(mine[name], values)
            for name, values, excludes in _with_excludes(key)
        ):
            return True
    return False


def _with_excludes(key: Any) -> list[tuple[str, tuple[str, ...], bool]]:
    """A resource key's (name, values, is excludes): ``resource_key`` marks excludes with a
    ``!`` after the name."""
    out = []
    for name, values, _ in key:
        text = str(name)
        out.append((text.rstrip("!").split("!")[0], tuple(str(v) for v in values), "!" in text))
    return out


def override_findings(
    policies: Mapping[tuple[str, Any], Json],
    overriding: Iterable[tuple[str, Any]],
    facts: Iterable[PolicyFact],
) -> list[str]:
    """Every override-priority policy of :func:`overriding_policies` with allow items:
    reported, whether or not pushdown writes on what it matches yet (its allow items beat
    the model's DENYs there, and pushdown may not remove them)."""
    held = list(facts)
    out = []
    for key in sorted(overriding, key=str):
        policy = policies.get(key) or {}
        if not policy.get("policyItems"):
            continue
        hit = sorted({f.describe_resources() for f in held if overridden(f.service, f.resources, [key])})
        where = f" (pushdown writes on {'; '.join(hit)})" if hit else ""
        out.append(
            f"policy {policy.get('name')!r} ({key[0]}:{describe(key[1])}) has override priority: its "
            f"allow items beat every deny item on what it matches{where}; pushdown writes no deny "
            f"items in service {key[0]} where it may match (narrower) and cannot stop its own allows"
        )
    return out
