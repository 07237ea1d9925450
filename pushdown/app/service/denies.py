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


def holds_deny(model: Model, role: str) -> bool:
    """Whether ``role`` holds a DENY."""
    return any(grant.condition is Condition.DENY for grant in model.roles.get(role, ()))


def denies_lifted(model: Model, user: str) -> list[str]:
    """The roles with a DENY that removing ``user`` would lift while the directory keeps him
    a user: those he holds, and those of the model's groups he leaves (the groups the
    directory names him in he stays in)."""
    stays = {g for g, members in model.external_members.items() if user in members and g in model.groups}
    if not stays:
        return []
    held = set(model.user_roles.get(user, ()))
    for group in model.user_groups.get(user, set()) - stays:
        held |= model.group_roles.get(group, set())
    return sorted(r for r in held if holds_deny(model, r))
