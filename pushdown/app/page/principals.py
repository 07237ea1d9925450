"""The principal view and the audit: what one user may do, and the journal."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pushdown.app.page.reader import PAGE, PAGE_OPS, THROUGH, Reader
from pushdown.app.service.history import describe
from pushdown.decide.compiler import Entitlements
from pushdown.decide.decider import Decider
from pushdown.decide.inventory import Inventory
from pushdown.decide.views import Keys, View
from pushdown.model.principals import Principal
from pushdown.model.securables import METALAKE, ObjectRef
from pushdown.model.state import Model
from pushdown.report.local import local_rows

# -- the principal view -----------------------------------------------------------------

#: how far back the principal view looks for changes naming the user
RECENT = 300


def _names_one_of(event: Any, names: set[str]) -> bool:
    for value in vars(event).values():
        if isinstance(value, str) and value in names:
            return True
        if isinstance(value, Principal) and value.name in names:
            return True
    return False


class _OneUser:
    """An engine answering for one user, the compiler's compact form without the compile:
    one :class:`~pushdown.decide.views.View` whose keys are the objects the user's roles
    hold grants on and the objects the user owns (its decider knows both), so the
    report's walk (:func:`pushdown.report.local.local_rows`) visits what carries
    something for this user and the containers whose stand-in child may be allowed. It
    costs the user's grants, not the estate's (a compile notes every role's grants in
    the catalogs it covers)."""

    name = "local"

    def __init__(self, user: str) -> None:
        self.user = user

    def compile(
        self,
        model: Model,
        operations: Sequence[str],
        inventory: Inventory,
        users: Any = None,
        roots: Any = None,
    ) -> Entitlements:
        user = self.user
        roles = frozenset(model.roles_of(user))
        nodes = {g.object for role in roles for g in model.roles.get(role, ())}
        owned = set(model.owned_by.get(user, ()))
        decider = Decider(model, roles, owned, user in model.service_admins)
        everywhere = frozenset({METALAKE})
        view = View(decider, Keys.of(nodes | owned), inventory, everywhere, tuple(operations))
        out = Entitlements(tuple(operations), inventory, everywhere)
        out.by_user[user] = view
        for catalog in inventory.children(METALAKE):
            out.classes[catalog.names[0]] = [(frozenset({user}), view)]
            out.owners[catalog.names[0]] = {}
        return out


@dataclass
class PrincipalView:
    user: str
    groups: list[str]
    roles: list[tuple[str, str]]
    #: catalog -> object -> [(operation, reason)]
    rows: dict[str, dict[str, list[tuple[str, str]]]]
    total: int
    page: int
    pages: int
    changes: list[dict[str, Any]]
    seconds: float


def principal_view(reader: Reader, name: str, inventory: Inventory, page: int = 1) -> PrincipalView:
    started = time.perf_counter()
    user = reader.user(name)
    model = reader.model
    lines: list[tuple[str, str, str, str]] = []  # catalog, object, operation, reason
    loads: dict[tuple[str, str], bool] = {}
    for part in local_rows(model, PAGE_OPS, inventory, compiler=_OneUser(user)):
        for batch in part.batches:
            for row in batch:
                catalog, _, obj, kind, op, reason, role, privilege, source, stype, _via, group = row
                if catalog is None or obj is None or kind is None or op is None:
                    continue
                if user != reader.caller:  # another's: only what the caller may load
                    seen = loads.get((kind, obj))
                    if seen is None:
                        seen = loads[(kind, obj)] = reader.may_load(ObjectRef.parse(f"{kind} {obj}"))
                    if not seen:
                        continue
                if reason == "grant":
                    how = f"{reader.role_words(role)}: {privilege} on {stype} {source}"
                    how += f" ({reader.held_words(THROUGH + group)})" if group else ""
                elif reason == "owner":
                    how = f"owner of {stype} {source}"
                else:
                    how = str(reason)
                lines.append((catalog, f"{kind} {obj}", op, how))
    objects = sorted({(c, o) for c, o, _, _ in lines})
    pages = max(1, -(-len(objects) // PAGE))
    page = min(max(page, 1), pages)
    chosen = set(objects[(page - 1) * PAGE : page * PAGE])
    rows: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for catalog, obj, op, how in lines:
        if (catalog, obj) in chosen:
            rows.setdefault(catalog, {}).setdefault(obj, []).append((op, how))
    held = model.roles_of(user)
    # the recent changes naming them, their roles or their groups: among the journal's last
    # RECENT entries (the whole journal is the audit view's, filtered by principal), each
    # naming only principals and roles the caller may see, as in the audit
    names = {user, *held, *model.user_groups.get(user, ())}
    recent = reader.ac.store.history(limit=RECENT)
    changes = [
        _entry(e)
        for e in recent
        if _names_one_of(e.event, names) and (reader.admin or _names_shown(reader, e.event))
    ][:20]
    # their groups and roles as REST shows them: get_user names the roles held directly,
    # get_group and get_role the others
    groups = sorted(g for g in model.user_groups.get(user, ()) if reader.sees_group(g))
    roles = [
        (role, reader.held_words(how))
        for role, how in sorted(held.items())
        if how == "directly" or reader.sees_role(role)
    ]
    return PrincipalView(
        user,
        groups,
        roles,
        rows,
        len(objects),
        page,
        pages,
        changes,
        time.perf_counter() - started,
    )


# -- the audit --------------------------------------------------------------------------


def _entry(e: Any) -> dict[str, Any]:
    return {
        "seq": e.seq,
        "at": e.at,
        "actor": e.actor,
        "via": e.via,
        "change": describe(e.event),
        "event": e.event,
    }


def audit(
    reader: Reader, principal: str = "", obj: str = "", page: int = 1
) -> tuple[list[dict[str, Any]], bool]:
    """Journal entries, newest first, filtered; a non-admin sees those naming himself or an
    object he may load, and naming no principal or role REST would not show him (the filter
    itself must name something he may see)."""
    mentions: list[str] = []
    if principal:
        mentions.append(f"user {reader.user(principal)}")
    if obj:
        mentions.append(str(reader.obj(obj)))
    out: list[dict[str, Any]] = []
    before: int | None = None
    want = page * PAGE + 1
    kept: list[dict[str, Any]] = []
    while len(kept) < want:
        batch = reader.ac.store.history(mentions=mentions, limit=500, before=before)
        if not batch:
            break
        for e in batch:
            if reader.admin or (_mine(reader, e.event) and _names_shown(reader, e.event)):
                kept.append(_entry(e))
        before = batch[-1].seq
        if len(batch) < 500:
            break
    out = kept[(page - 1) * PAGE : page * PAGE]
    return out, len(kept) > page * PAGE


def _names_shown(reader: Reader, event: Any) -> bool:
    """Whether every principal, role and object the journal line names is one REST would
    show the caller (:class:`Reader`'s rules: get_user, get_group, get_role, get_owner, and
    the object's load operation, now: an object he no longer may load, or one dropped, is
    not named)."""
    for key, value in vars(event).items():
        if value is None:
            continue
        if key == "previous" and getattr(event, "owner", None) is not None:
            continue  # the line names the new owner only
        if key in ("user", "previous"):
            ok = reader.sees_user(value)
        elif key in ("users", "added", "removed"):
            ok = all(reader.sees_user(u) for u in value)
        elif key == "owner":
            ok = reader.sees_owner(value, event.object)
        elif key == "group":
            ok = reader.sees_group(value)
        elif key == "role":
            ok = reader.sees_role(value)
        elif isinstance(value, Principal):
            ok = reader.sees_principal(value)
        elif isinstance(value, ObjectRef) and value.type.value == "role":
            ok = reader.sees_role(value.names[0])
        elif isinstance(value, ObjectRef):  # an object the caller may load now (REST's rule)
            ok = value in reader.model.objects and reader.may_load(value)
        else:
            continue
        if not ok:
            return False
    return True


def _mine(reader: Reader, event: Any) -> bool:
    for value in vars(event).values():
        if value == reader.caller:
            return True
        if isinstance(value, ObjectRef) and value in reader.model.objects and reader.may_load(value):
            return True
        if hasattr(value, "name") and getattr(value, "name", None) == reader.caller:
            return True
    return False
