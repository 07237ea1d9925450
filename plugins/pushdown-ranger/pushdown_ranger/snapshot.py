"""What a read of Ranger holds (:class:`RangerSnapshot`), what an apply answered
(:class:`RangerApplied`), and the state the backend's parts share (:class:`RangerBase`,
set by :class:`~pushdown_ranger.backend.RangerBackend`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pushdown.model.state import Model
from pushdown.reconcile.backend import (
    Applied,
    Backend,
    Desired,
    Snapshot,
)
from pushdown.reconcile.identity import KeptIdentity
from pushdown_ranger.answers import Written
from pushdown_ranger.client import RangerAPI
from pushdown_ranger.compile.classes import KeptClasses
from pushdown_ranger.compile.desired import RangerNaming

if TYPE_CHECKING:
    from pushdown_ranger.compiling import ImpliedDatabases, ReadIndex
    from pushdown_ranger.reporting import _Found

Json = dict[str, Any]
Implied = tuple[tuple[str, str, frozenset[str]], ...]
DENY_OPTION = "enableDenyAndExceptionsInPolicies"


@dataclass(frozen=True)
class RangerSnapshot(Snapshot):
    #: every policy read, by (service, resource set): pushdown's or not
    policies: Mapping[tuple[str, Any], Json] = field(default_factory=dict, compare=False)
    roles: Mapping[str, Json] = field(default_factory=dict, compare=False)
    services: frozenset[str] = frozenset()
    deny: Mapping[str, bool] = field(default_factory=dict, compare=False)
    versions: tuple[tuple[str, Any, Any], ...] = ()
    #: security zones, and the policies of pushdown's services inside them (never facts)
    zones: tuple[Json, ...] = field(default=(), compare=False)
    zoned: tuple[Json, ...] = field(default=(), compare=False)
    #: roles pushdown does not manage
    others: tuple[Json, ...] = field(default=(), compare=False)
    #: (service, access type, what else it grants) from the service definitions
    implied: Implied = ()
    #: policies on the resource set of another (another priority, or disabled): never written
    shadowed: tuple[Json, ...] = field(default=(), compare=False)
    #: Hive databases where hand-made policies void deny items: database -> why
    voided: Mapping[str, str] = field(default_factory=dict, compare=False)
    #: policies with pushdown's label in services it is not configured for (written before
    #: a ``*_service`` setting changed): reported
    strays: tuple[Json, ...] = field(default=(), compare=False)
    #: resource sets of other services with a policy voiding deny items
    voiding: frozenset[tuple[str, Any]] = frozenset()
    #: resource sets of override-priority policies in the topic and fileset services
    overriding: frozenset[tuple[str, Any]] = frozenset()
    #: pushdown's narrowing policies (:mod:`pushdown_ranger.companion`), by the key of the
    #: policy each narrows; never among ``policies``
    narrowings: Mapping[tuple[str, Any], Json] = field(default_factory=dict, compare=False)

    @property
    def role_version(self) -> int:
        known = [v[2] for v in self.versions if v[0] == "" and isinstance(v[2], int)]
        return known[0] if known else -1


def deny_enabled(sdef: Json) -> bool:
    """As Ranger reads it (``Boolean.valueOf``): absent or empty is the default (on); any
    other value turns deny items on only when it is ``true`` (any case, not trimmed)."""
    value = (sdef.get("options") or {}).get(DENY_OPTION)
    return value is None or value == "" or str(value).lower() == "true"


@dataclass(frozen=True, kw_only=True)
class RangerApplied(Applied):
    """What an apply did, and what Ranger answered to its writes (the read-back of the
    touched keys, for :meth:`RangerBackend.reread`)."""

    written: Written


def digest(
    versions: tuple[tuple[str, Any, Any], ...], deny: Mapping[str, bool], implied: Implied = ()
) -> str:
    text = json.dumps([versions, sorted(deny.items()), implied], default=sorted)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def complete(versions: tuple[tuple[str, Any, Any], ...]) -> bool:
    """Whether the versions say everything: policy versions, and a role version somewhere."""
    has_roles = any(v[2] is not None for v in versions)
    return has_roles and all(v[1] is not None for v in versions if v[0])


class RangerBase(Backend):
    """What the backend's parts share (:mod:`pushdown_ranger.compiling`, ``reporting``,
    ``reading``, ``applying``), set by :class:`~pushdown_ranger.backend.RangerBackend`."""

    api: RangerAPI
    naming: RangerNaming
    deny_items: str
    hdfs_fallback: str
    label: str
    role_service: str
    last: RangerSnapshot | None
    problems: dict[str, str]
    seen_users: set[str]
    seen_groups: set[str]
    kept: KeptIdentity
    _compiled: tuple[object, Desired, Model] | None
    _hive: tuple[object, str | None, Model] | None
    _members: tuple[object, frozenset[str], Model] | None
    _folds: tuple[object, dict[str, int]] | None
    _findings: tuple[RangerSnapshot, tuple[int, int], tuple[str, ...]] | None
    _seen_now: tuple[tuple[int, int], frozenset[str], frozenset[str]] | None
    _seen: object
    _members_seen: dict[int, Json]
    _roles_seen: object
    _implied: ImpliedDatabases | None
    #: the index of a read's facts for a change of principals (compiling.ReadIndex)
    _index: ReadIndex | None
    #: the roles hand-made roles hold as members, of the hand-made roles read last (Applying)
    _others_nested: tuple[object, frozenset[str]] | None
    #: each class's Hive items per database, taken over by the next compile (compile.classes)
    _classes: KeptClasses
    #: the read findings of each policy and role as read (Reporting._each)
    _found_each: dict[str, _Found]
    #: the last read-back's patch: (policies before, after, their keys written; roles the same)
    _patch: tuple[object, object, tuple[Any, ...], object, object, tuple[str, ...]] | None
    _facts: dict[int, tuple[Json, Any]]
