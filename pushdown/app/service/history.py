"""``pushdown log``: who changed what, and when, from the journal (newest first)."""

from __future__ import annotations

import json
from typing import Any

from pushdown.journal.store import JournalEntry, Store
from pushdown.model import events as ev
from pushdown.model.securables import ObjectRef


def _privs(privileges: frozenset[Any]) -> str:
    return ", ".join(sorted(p.value for p in privileges))


def describe(event: ev.Event) -> str:
    """One event in words."""
    match event:
        case ev.UserAdded(user=u):
            return f"added user {u}"
        case ev.UserRemoved(user=u):
            return f"removed user {u}"
        case ev.GroupAdded(group=g):
            return f"added group {g}"
        case ev.GroupRemoved(group=g):
            return f"removed group {g}"
        case ev.GroupMemberAdded(group=g, user=u):
            return f"added user {u} to group {g}"
        case ev.GroupMemberRemoved(group=g, user=u):
            return f"removed user {u} from group {g}"
        case ev.RoleCreated(role=r):
            return f"created role {r}"
        case ev.RoleDeleted(role=r):
            return f"deleted role {r}"
        case ev.PrivilegesGranted(role=r, object=o, privileges=p, condition=c):
            return f"granted {c.value} {_privs(p)} on {o} to role {r}"
        case ev.PrivilegesRevoked(role=r, object=o, privileges=p, condition=c):
            return f"revoked {c.value} {_privs(p)} on {o} from role {r}"
        case ev.RoleGranted(role=r, principal=p):
            return f"granted role {r} to {p}"
        case ev.RoleRevoked(role=r, principal=p):
            return f"revoked role {r} from {p}"
        case ev.OwnerSet(object=o, owner=None, previous=prev):
            return f"cleared the owner of {o} (was {prev})"
        case ev.OwnerSet(object=o, owner=owner):
            return f"made user {owner} the owner of {o}"
        case ev.ServiceAdminsSet(users=users):
            return f"set the service admins to {', '.join(sorted(users)) or 'nobody'}"
        case ev.ObjectCreated(object=o, owner=owner):
            return f"registered {o}" + (f" (owner {owner})" if owner else "")
        case ev.ObjectRenamed(object=o, new_object=n):
            return f"renamed {o} to {n}"
        case ev.ObjectDropped(object=o):
            return f"dropped {o}"
        case ev.ExternalMembersChanged(group=g, added=a, removed=r):
            return f"the directory's members of group {g} changed (+{len(a)} -{len(r)})"
    return event.name


def subject(kind: str, name: str) -> str:
    """What to look for: ``user NAME``, ``group NAME``, ``role NAME`` or an object's full name."""
    if kind == "object":
        return str(ObjectRef.parse(name))
    return f"{kind} {name}"


def entries(store: Store, subjects: list[str], limit: int | None) -> list[JournalEntry]:
    return store.history(mentions=subjects, limit=limit)


def as_dict(entry: JournalEntry) -> dict[str, Any]:
    return {
        "seq": entry.seq,
        "at": entry.at,
        "actor": entry.actor,
        "via": entry.via,
        "request": entry.request,
        "event": entry.event.name,
        "change": describe(entry.event),
        "details": json.loads(entry.event.to_json()),
    }


def line(entry: JournalEntry) -> str:
    who = entry.actor or "(no author)"
    via = entry.via or "-"
    if entry.request:
        via += f" {entry.request}"
    return f"#{entry.seq}  {entry.at}  {who} via {via}: {describe(entry.event)}"
