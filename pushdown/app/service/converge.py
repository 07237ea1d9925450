"""Compute the changes that turn the stored model into a target model (a loaded spec).

The changes go through :mod:`pushdown.model.changes`, one at a time against the working
model, so the journal records the same facts as if someone had made each change by
hand. Removals come first (narrow before widening), then additions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pushdown.model import changes as ch
from pushdown.model.events import Event
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model

Step = tuple[Callable[..., list[Event]], tuple[Any, ...]]


def _assignments(model: Model) -> set[tuple[str, Principal]]:
    out = {(r, Principal.user(u)) for u, roles in model.user_roles.items() for r in roles}
    return out | {(r, Principal.group(g)) for g, roles in model.group_roles.items() for r in roles}


def _grants(model: Model) -> set[tuple[str, Any]]:
    return {(role, g) for role, grants in model.roles.items() for g in grants}


def _members(model: Model) -> set[tuple[str, str]]:
    return {(g, u) for g, users in model.groups.items() for u in users}


def _shallow_first(obj: ObjectRef) -> tuple[int, str, tuple[str, ...]]:
    return (len(obj.names), obj.type.value, obj.names)


def converge(model: Model, target: Model) -> list[Event]:
    """Apply to ``model`` the changes that make it equal ``target``; return their events."""
    events: list[Event] = []

    def run(change: Callable[..., list[Event]], *args: Any) -> None:
        for event in change(model, *args):
            model.apply(event)
            events.append(event)

    for role, g in sorted(_grants(model) - _grants(target)):
        if role in model.roles:
            run(ch.revoke_privileges, role, g.object, [g.privilege], g.condition)
    for role, p in sorted(_assignments(model) - _assignments(target)):
        if role in model.roles and model.principal_exists(p):
            run(ch.revoke_role, role, p)
    for group, user in sorted(_members(model) - _members(target)):
        if group in model.groups:
            run(ch.remove_member, group, user)
    gone = set(model.objects) - set(target.objects)
    # an object whose properties (the enforcing backend) changed is dropped and registered again
    changed = {o for o in set(target.objects) & set(model.objects) if model.objects[o] != target.objects[o]}
    if gone or changed:
        run(ch.drop_objects, gone | changed)  # one pass, however many objects go
    for obj in sorted(o for o in model.owners if o not in target.owners):
        run(ch.clear_owner, obj)
    run(ch.set_service_admins, model.service_admins & target.service_admins)
    for role in sorted(set(model.roles) - set(target.roles)):
        run(ch.delete_role, role)
    for group in sorted(set(model.groups) - set(target.groups)):
        run(ch.remove_group, group)
    for user in sorted(model.users - target.users):
        run(ch.remove_user, user)

    for user in sorted(target.users - model.users):
        run(ch.add_user, user)
    for group in sorted(set(target.groups) - set(model.groups)):
        run(ch.add_group, group)
    for group, user in sorted(_members(target) - _members(model)):
        run(ch.add_member, group, user)
    run(ch.set_service_admins, target.service_admins)
    for obj in sorted(set(target.objects) - set(model.objects), key=_shallow_first):
        run(ch.create_object, obj, None, target.objects[obj])
    for role in sorted(set(target.roles) - set(model.roles)):
        run(ch.create_role, role)
    for role, g in sorted(_grants(target) - _grants(model)):
        run(ch.grant_privileges, role, g.object, [g.privilege], g.condition)
    for role, p in sorted(_assignments(target) - _assignments(model)):
        run(ch.grant_role, role, p)
    for obj, owner in sorted(target.owners.items(), key=lambda item: _shallow_first(item[0])):
        if model.owners.get(obj) != owner:
            run(ch.set_owner, obj, owner)
    model.metalake = target.metalake
    return events
