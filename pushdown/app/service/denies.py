"""Removals that leave a principal a user: which DENYs they would lift.

Removing a user the directory still names, removing a group with members, or taking a user
out of a group leaves the principal a user of the metalake with his other roles and groups
(the directory's among them). When a role held that way carries a DENY, the removal lifts
it: :mod:`pushdown.app.service.changes` then asks the acting user for ``revoke_role`` on
that role too. The rules are fixed texts: a refusal names no role, group or grant.
"""

from __future__ import annotations

from pushdown.model.privileges import Condition
from pushdown.model.state import Model

#: The fixed rule a removal refused by :func:`denies_lifted` names (no role, group or grant).
DENIES_STAY = (
    "the directory still names this user, so removing him would lift DENYs while the directory's "
    "roles still apply; only a caller who may revoke those DENYs may remove him"
)


#: The fixed rule a group's removal refused for its roles' DENYs names.
GROUP_DENIES_STAY = (
    "its members stay users, so removing it would lift the DENYs of its roles; only a caller who "
    "may revoke those roles may remove it"
)


#: The fixed rule a member's removal refused for the group's DENYs names.
MEMBER_DENIES_STAY = (
    "the user stays a user, so taking him out of the group would lift the DENYs of its roles; "
    "only a caller who may revoke those roles may"
)


#: The fixed rule a drop refused for a DENY on the object or below names.
OBJECT_DENIES_STAY = (
    "the server keeps the data under its name, so dropping or renaming it would lift the DENYs on it "
    "or below; only a caller who may revoke them may"
)


def holds_deny(model: Model, role: str) -> bool:
    """Whether ``role`` holds a DENY."""
    return any(grant.condition is Condition.DENY for grant in model.roles.get(role, ()))


def _directory_groups(model: Model, user: str) -> set[str]:
    """The model's groups the directory names ``user`` in (he stays in them whatever the
    model's memberships)."""
    return {g for g, members in model.external_members.items() if user in members and g in model.groups}


def _kept(model: Model, groups: set[str]) -> set[str]:
    """The roles ``groups`` grant their members."""
    return {role for group in groups for role in model.group_roles.get(group, ())}


def denies_lifted(model: Model, user: str) -> list[str]:
    """The roles with a DENY that removing ``user`` would lift while the directory keeps him
    a user: those he holds, and those of the model's groups he leaves (the groups the
    directory names him in he stays in, and a role one of them grants him is not lifted)."""
    stays = _directory_groups(model, user)
    if not stays:
        return []
    held = set(model.user_roles.get(user, ())) | _kept(model, model.user_groups.get(user, set()) - stays)
    return sorted(r for r in held - _kept(model, stays) if holds_deny(model, r))


def member_denies_lifted(model: Model, group: str, user: str) -> list[str]:
    """The roles with a DENY that taking ``user`` out of ``group`` would lift: the group's,
    less those he keeps (directly, or through his other groups, the directory's among them)."""
    denies = {r for r in model.group_roles.get(group, ()) if holds_deny(model, r)}
    if not denies:
        return []
    others = (set(model.user_groups.get(user, ())) | _directory_groups(model, user)) - {group}
    kept = set(model.user_roles.get(user, ())) | _kept(model, others)
    return sorted(denies - kept)


def group_denies_lifted(model: Model, group: str) -> list[str]:
    """The roles with a DENY that removing ``group`` would lift for one of its members (the
    model's or the directory's), who stay users."""
    denies = {r for r in model.group_roles.get(group, ()) if holds_deny(model, r)}
    if not denies:
        return []
    members = set(model.groups.get(group, ())) | set(model.external_members.get(group, ()))
    directory: dict[str, set[str]] = {}
    for g, named in model.external_members.items():
        if g in model.groups and g != group:
            for u in named & members:
                directory.setdefault(u, set()).add(g)
    lifted: set[str] = set()
    for user in sorted(members):
        others = (set(model.user_groups.get(user, ())) | directory.get(user, set())) - {group}
        lifted |= denies - set(model.user_roles.get(user, ())) - _kept(model, others)
        if lifted == denies:
            break
    return sorted(lifted)
