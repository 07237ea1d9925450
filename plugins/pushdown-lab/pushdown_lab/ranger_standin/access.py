"""An access request to decide and the engine's answer (and the request as evaluators see it)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pushdown_lab.ranger_standin.policyitems import ANY_ACCESS

__all__ = ["AccessRequest", "AccessResult", "Ask"]


@dataclass
class AccessRequest:
    """One access to decide. ``resource`` maps resource names to a value or a list of values."""

    resource: dict[str, Any]
    access_type: str
    user: str
    groups: Iterable[str] = ()
    owner: str | None = None
    roles: Iterable[str] = ()
    scopes: dict[str, str] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    matching_scope: str = "SELF"  # or SELF_OR_DESCENDANTS: a policy on a descendant applies too
    ignore_descendant_deny: bool = True  # Ranger's default: a deny on a descendant does not count

    @property
    def any_access(self) -> bool:
        return self.access_type in ("", ANY_ACCESS)


@dataclass
class AccessResult:
    """The engine's answer: ``allowed``; ``determined`` when a policy allowed or denied."""

    allowed: bool = False
    determined: bool = False
    audited: bool = False
    audit_determined: bool = False
    policy_id: int = -1
    priority: int = 0

    def take_access(self, other: AccessResult) -> None:
        self.allowed, self.determined = other.allowed, other.determined
        self.policy_id, self.priority = other.policy_id, other.priority


@dataclass
class Ask:
    """A request as the evaluators see it: resolved groups, roles, tokens, requested accesses."""

    request: AccessRequest
    who: tuple[str, frozenset[str], frozenset[str], str | None]
    tokens: dict[str, str]
    accesses: list[str]
    any_in_context: bool
    groups: list[list[str]] = field(default_factory=list)
    results: dict[str, AccessResult] = field(default_factory=dict)
