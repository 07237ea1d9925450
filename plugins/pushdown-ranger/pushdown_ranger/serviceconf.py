"""What a Ranger service's own settings can grant past pushdown's policies, read from the
list of services the cheap version check fetches anyway (no extra call). Pure.

- A linked tag service (``tagService``): Ranger evaluates its tag-based policies before the
  resource policies (a tag allow, or a tag policy with override priority, reaches resources
  whatever pushdown writes). pushdown does not read tag policies: a finding.
- A policy with pushdown's label in a service pushdown is no longer configured for (a
  ``*_service`` setting pointed elsewhere): its items still grant where that service's
  plugin enforces; pushdown no longer manages it: a finding naming it and what it allows.
- Super users and groups (``ranger.plugin.super.users`` / ``.groups`` in the service's
  configs): the plugin allows them everything, DENYs included: a finding.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

SUPER = ("ranger.plugin.super.users", "ranger.plugin.super.groups")


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
        configs = service.get("configs") or {}
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
