"""The target model a read of the source describes (:func:`to_model`), the mass-removal
check, and the fingerprint that says a read is the same as the last one used."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pushdown.app.settings import BackendConfig
from pushdown.app.settings.source import SourceSettings
from pushdown.app.source.gravitino import Snapshot, SourceUnreadable
from pushdown.app.source.surface import privilege_of
from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model.events import Event
from pushdown.model.names import parse_name
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model

NOT_EXACT = "cannot be enforced exactly"


@dataclass
class Built:
    model: Model
    notes: list[str]


def _names(kind: SecurableType, full: str, metalake: str) -> tuple[str, ...]:
    if kind is SecurableType.METALAKE:
        return ()
    plain = tuple(full.split("."))
    if len(plain) == kind.depth:
        return plain
    return parse_name(full)


def backend_of(
    catalog: str, prop: str | None, settings: SourceSettings, backends: Mapping[str, BackendConfig]
) -> tuple[str | None, str | None]:
    """(the backend enforcing ``catalog``, or None with why it is not enforced)."""
    named = settings.catalogs.get(catalog)
    if named is not None:
        return named, None
    if any(catalog in bc.catalogs for bc in backends.values()):
        return None, None  # the backend's own catalogs list takes it
    if prop is not None:
        if prop in backends:
            return prop, None
        return None, (
            f"catalog {catalog}: its property {settings.catalog_property} names backend {prop!r}, "
            "which is not configured; no backend enforces it"
        )
    how = (
        f"set its property {settings.catalog_property}"
        if settings.catalog_property
        else "a backend's catalogs"
    )
    return (
        None,
        f"catalog {catalog}: no configured backend enforces it (name it in [source.catalogs] or {how})",
    )


def to_model(
    snap: Snapshot,
    settings: SourceSettings,
    backends: Mapping[str, BackendConfig],
    service_admins: Iterable[str] = (),
) -> Built:
    """The model a read describes, and what of it pushdown cannot enforce (notes).

    What cannot be expressed is left out only when leaving it out is narrower (an allow,
    an owner); a deny is never left out: it is enforced as it is, or as a deny at least as
    wide (:data:`pushdown.app.source.surface.COVERED_BY`), or it makes the read unusable."""
    model = Model(metalake=snap.metalake)
    notes = list(snap.unlisted)

    def do(change: Any, *args: Any) -> None:
        for event in change(model, *args):
            model.apply(event)

    for user in sorted(snap.users):
        do(ch.add_user, user)
    for group in sorted(snap.groups):
        do(ch.add_group, group, [])
    admins = sorted(set(service_admins) & model.users)
    if admins:
        do(ch.set_service_admins, admins)
    for catalog, (_, prop) in sorted(snap.catalogs.items()):
        backend, why = backend_of(catalog, prop, settings, backends)
        if why is not None:
            notes.append(why)
        props = {} if backend is None else {"backend": backend}
        do(ch.create_object, ObjectRef(SecurableType.CATALOG, (catalog,)), None, props)
    for kind, names in sorted(snap.tree, key=lambda item: (len(item[1]), item)):
        do(ch.create_object, ObjectRef(SecurableType(kind), names))
    for role, rows in sorted(snap.roles.items()):
        do(ch.create_role, role)
        for type_, full, priv, cond in sorted(rows):
            _grant(model, role, type_, full, priv, cond, snap.metalake, notes)
    for user, roles in sorted(snap.users.items()):
        for role in sorted(roles):
            do(ch.grant_role, role, Principal.user(user))
    for group, roles in sorted(snap.groups.items()):
        for role in sorted(roles):
            do(ch.grant_role, role, Principal.group(group))
    for (kind, names), (owner, owner_type) in sorted(snap.owners.items()):
        obj = METALAKE if kind == "metalake" else ObjectRef(SecurableType(kind), names)
        if owner_type != "USER":
            notes.append(
                f"{obj}: owned by {owner_type.lower()} {owner}; pushdown's owners are users, left out"
            )
        elif owner not in model.users:
            notes.append(f"{obj}: owner {owner} is not a user of the metalake; left out")
        else:
            do(ch.set_owner, obj, owner)
    return Built(model, notes)


def _grant(
    model: Model, role: str, type_: str, full: str, priv: str, cond: str, metalake: str, notes: list[str]
) -> None:
    """One securable object's privilege into ``model`` (see :mod:`pushdown.app.source.surface`):
    what pushdown cannot hold is left out only when it is an ALLOW; a DENY is enforced as
    it is or wider, or the read is not used. A DENY is never dropped."""
    what = f"role {role}: {cond.lower()} {priv.lower()} on {type_} {full}"
    try:
        condition = Condition.parse(cond)
    except ModelError:  # it may deny: leaving it out could widen
        raise SourceUnreadable(
            NOT_EXACT, f"{what}: a condition pushdown does not know (only ALLOW and DENY); it may deny"
        ) from None
    privilege, wider = privilege_of(priv, condition)
    if privilege is None:
        if condition is Condition.DENY:  # leaving a deny out would widen: the read is not used
            raise SourceUnreadable(
                NOT_EXACT,
                f"{what}: a DENY of a privilege pushdown does not enforce; leaving it out could widen "
                "what the backends grant, so the read is not used (remove the DENY or the privilege's use)",
            )
        notes.append(f"{what}: a privilege pushdown does not enforce; left out (narrower)")
        return
    try:
        kind = SecurableType.parse(type_)
        obj = ObjectRef(kind, _names(kind, full, metalake))
        events = ch.grant_privileges(model, role, obj, [privilege], condition)
    except ModelError as exc:
        if condition is Condition.DENY:  # leaving a deny out would widen: the read is not used
            raise SourceUnreadable(NOT_EXACT, f"{what}: {exc}") from None
        notes.append(f"{what}: {exc}; left out")
        return
    if wider:
        notes.append(
            f"{what}: enforced as DENY {privilege.value.lower()} on {type_} {full} (wider: pushdown does not "
            f"hold {priv.lower()}, and {privilege.value.lower()} covers it on every backend)"
        )
    for event in events:
        model.apply(event)


# -- the mass-removal check -----------------------------------------------------------------


def _facts(model: Model) -> set[tuple[Any, ...]]:
    grants = {("grant", role, g) for role, grants in model.roles.items() for g in grants}
    held = {("user", r, u) for u, roles in model.user_roles.items() for r in roles}
    held |= {("group", r, g) for g, roles in model.group_roles.items() for r in roles}
    return grants | held | {("owner", o, u) for o, u in model.owners.items()}


def removal_guard(current: Model, target: Model, settings: SourceSettings) -> str | None:
    """Why ``target`` needs a go-ahead: it removes more than ``max_removal_share`` of the
    grants, role assignments and owners ``current`` holds (and at least a few)."""
    held = _facts(current)
    if not held:
        return None
    removes = len(held - _facts(target))
    if removes < settings.min_guarded_removals or removes <= settings.max_removal_share * len(held):
        return None
    share = "all" if removes >= len(held) else f"{removes / len(held):.0%}"
    return (
        f"this read removes {removes} of the {len(held)} grant(s), role assignment(s) and owner(s) the "
        f"model holds ({share}; the limit is {settings.max_removal_share:.0%}, setting "
        "source.max_removal_share); nothing was changed: if the source is right, run "
        "`pushdown pull --allow-mass-removal`"
    )


def fingerprint(snap: Snapshot) -> str:
    def rows(d: Mapping[Any, Any]) -> list[Any]:
        return sorted([k, sorted(v) if isinstance(v, frozenset) else v] for k, v in d.items())

    parts = [
        snap.metalake,
        rows(snap.users),
        rows(snap.groups),
        rows(snap.roles),
        rows(snap.catalogs),
        sorted(snap.tree),
        rows(snap.owners),
        list(snap.unlisted),
    ]
    return hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode()).hexdigest()


def summary(events: Iterable[Event]) -> dict[str, int]:
    """Event counts by kind, in words: {"role granted": 2, ...}."""
    return dict(Counter(re.sub(r"(?<!^)([A-Z])", r" \1", type(e).__name__).lower() for e in events))
