"""What a Ranger service's own settings can grant past pushdown's policies, read from the
list of services the cheap version check fetches anyway (no extra call). Pure.

- A linked tag service (``tagService``): Ranger evaluates its tag-based policies before the
  resource policies (a tag allow, or a tag policy with override priority, reaches resources
  whatever pushdown writes). pushdown does not read tag policies: a finding.
- A policy with pushdown's label in a service pushdown is no longer configured for (a
  ``*_service`` setting pointed elsewhere): its items still grant where that service's
  plugin enforces; pushdown no longer manages it: a finding naming it and what it allows.
- A disabled service (``isEnabled``): its plugins enforce none of its policies: a finding.
- Service admin users and groups (``service.admin.users`` / ``.groups``): they may write
  policies outside pushdown: a finding (what they write is read like any hand-made policy).
- Super users and groups (``ranger.plugin.super.users`` / ``.groups`` in the service's
  configs): the plugin allows them everything, DENYs included: a finding.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

SUPER = ("ranger.plugin.super.users", "ranger.plugin.super.groups")
#: users and groups who administer the service's policies in Ranger Admin (and may write one)
ADMINS = ("service.admin.users", "service.admin.groups")


def service_findings(services: Iterable[Any], wanted: Iterable[str]) -> list[str]:
    names = set(wanted)
    out: list[str] = []
    for service in services:
        name = str(service.get("name"))
        if name not in names:
            continue
        tag = service.get("tagService")
        if tag:
            out.append(
                f"service {name}: linked tag service {tag!r}: Ranger evaluates its tag-based policies "
                "first (an allow or an override there reaches resources whatever pushdown writes); "
                "pushdown does not read them"
            )
        if service.get("isEnabled") is False:
            out.append(
                f"service {name} is disabled: its plugins enforce none of its policies, pushdown's "
                "included (Hive and Kafka then deny; HDFS falls back to HDFS permissions); enable it"
            )
        configs = service.get("configs") or {}
        for key in ADMINS:
            listed = sorted({v.strip() for v in str(configs.get(key) or "").split(",") if v.strip()})
            if listed:
                out.append(
                    f"service {name}: {key} = {', '.join(listed)}: they may write its policies in "
                    "Ranger Admin, outside pushdown (what they write is read and reported)"
                )
        for key in SUPER:
            listed = sorted({v.strip() for v in str(configs.get(key) or "").split(",") if v.strip()})
            if listed:
                out.append(
                    f"service {name}: {key} = {', '.join(listed)}: Ranger's plugin allows these super "
                    "users/groups everything there, DENYs included, outside pushdown"
                )
    return out


def stray_finding(policy: Any, label: str) -> str:
    allowed = sorted(
        {
            f"{kind[:-1]} {name}"
            for item in policy.get("policyItems") or ()
            for kind in ("users", "groups", "roles")
            for name in item.get(kind) or ()
        }
    )
    return (
        f"policy {policy.get('name')!r} in service {policy.get('service')} carries pushdown's label "
        f"{label!r} but that service is not one pushdown is configured for: it still allows "
        f"{', '.join(allowed) or 'nobody'} wherever its plugin enforces, outside pushdown; remove it"
    )
