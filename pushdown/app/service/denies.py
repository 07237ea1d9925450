"""Removals that leave a principal a user: which DENYs they would lift, and what a caller
who may not revoke roles is asked instead.

Removing a user the directory still names, removing a group with members, or taking a user
out of a group leaves the principal a user of the metalake with his other roles and groups
(the directory's among them). When a role held that way carries a DENY, the removal lifts
it: :mod:`pushdown.app.service.changes` then asks the acting user for ``revoke_role`` on
that role too. The rules are fixed texts: a refusal names no role, group or grant.

A refusal reveals nothing the caller may not see, so for a caller who may not revoke roles
(``revoke_role`` asks MANAGE_GRANTS or the metalake's owner, whatever the role) the
decision is made on what he sees, and never lifts a DENY:

- a user the directory still names (who stays listed once removed: the success would show
  it too) is removed only by a caller who may revoke roles: removing him takes nothing but
  his roles, groups and ownerships, and which roles and groups he holds, and whether they
  hold a DENY, a holder of MANAGE_USERS may not see (:func:`stays_a_user`);
- a group (or a member taken out of it) is removed only when each role the group holds
  (shown by ``get_group`` to who may remove it) is one the caller may read (``get_role``)
  and holds no DENY: its members, and what they keep through other roles and groups, he
  may not see (:func:`roles_unseen_or_denying`).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from pushdown.decide.evaluator import Evaluator
from pushdown.decide.requirements import OPERATIONS, AnyOf, Has, Owner, Term
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import SecurableType
from pushdown.model.state import Model

#: The fixed rule a removal refused by :func:`denies_lifted` names (no role, group or grant).
DENIES_STAY = (
    "the directory still names this user, so removing him takes only his roles and groups away "
    "while the directory's roles still apply; only a caller who may revoke roles may remove him"
)


#: The fixed rule a group's removal refused for its roles' DENYs names.
GROUP_DENIES_STAY = (
    "its members stay users, so removing it revokes its roles from them; a group holding a role "
    "with a DENY, or a role the caller may not read, only a caller who may revoke those roles "
    "may remove"
)


#: The fixed rule a member's removal refused for the group's DENYs names.
MEMBER_DENIES_STAY = (
    "the user stays a user, so taking him out of the group revokes its roles from him; out of a "
    "group holding a role with a DENY, or a role the caller may not read, only a caller who may "
    "revoke those roles may"
)


#: The fixed rule a drop refused for a DENY on the object or below names.
OBJECT_DENIES_STAY = (
    "the server keeps the data under its name, so dropping or renaming it would lift the DENYs on it "
    "or below; only a caller who may revoke them may"
)


#: The fixed rule a membership refused for the roles it would grant names.
MEMBER_GRANTS_ROLES = (
    "taking a user into a group grants him its roles; into a group holding roles only a caller "
    "who may grant roles may"
)


#: The fixed rule a creation naming another owner than its caller names.
NAMED_OWNER = (
    "a caller creates as himself: naming another owner would hand him ownership past the checks "
    "of a change of owner; create it, then set its owner"
)


#: The fixed rule a change of owner refused for a DENY on the object or below names.
OWNER_DENIES_STAY = (
    "an owner's rights pass the DENYs on the object, below and above it, so handing it to another "
    "owner would lift them for him; only a caller who may revoke them, or revoke roles, may"
)


#: The fixed rule a role's deletion refused for its DENYs names.
ROLE_DENIES_STAY = (
    "deleting it would lift its DENYs for whoever holds it; only a caller who may revoke them, "
    "or revoke roles, may delete a role holding a DENY"
)


#: A role name no role can have (a control character): ``revoke_role`` judged on it is the
#: caller's right to revoke roles at all (the requirement names no term of the role).
ANY_ROLE = "\x00any role"


def _has_terms(term: Term) -> Iterator[Has]:
    if isinstance(term, Has):
        yield term
    for sub in getattr(term, "terms", ()):
        yield from _has_terms(sub)


def _owner_passes(term: Term, out: set[Privilege]) -> None:
    """Add to ``out`` the privileges of each ``Has`` below an ``AnyOf`` that an owner of an
    object other than the metalake meets instead (its ``Owner`` alternative)."""
    subs = getattr(term, "terms", ())
    if isinstance(term, AnyOf) and any(
        isinstance(s, Owner) and (not s.levels or any(t is not SecurableType.METALAKE for t in s.levels))
        for s in subs
    ):
        for has in _has_terms(term):
            out.update(has.privileges)
    for sub in subs:
        _owner_passes(sub, out)


@cache
def owner_passes() -> frozenset[Privilege]:
    """The privileges a DENY of which an owner's rights may pass: those of the requirement
    table that an owner (of an object, of its schema or catalog) meets another way. A DENY
    of another privilege on an object's ancestor (CREATE_CATALOG, MANAGE_USERS on the
    metalake) reaches nothing its new owner gains."""
    out: set[Privilege] = set()
    for operation in OPERATIONS.values():
        _owner_passes(operation.requires, out)
    return frozenset(out)


def holds_deny(model: Model, role: str) -> bool:
    """Whether ``role`` holds a DENY."""
    return any(grant.condition is Condition.DENY for grant in model.roles.get(role, ()))


def stays_a_user(model: Model, user: str) -> bool:
    """Whether the directory names ``user`` in a group, so he stays a user of the metalake
    (listed, as the decision model holds him) once the model removes him."""
    return any(user in members for members in model.external_members.values())


def may_revoke_roles(evaluator: Evaluator, user: str) -> bool:
    """Whether ``user`` may revoke roles (``revoke_role``: the same for every role)."""
    return evaluator.authorize(user, "revoke_role", ANY_ROLE, explain=False).allowed


def roles_unseen_or_denying(model: Model, evaluator: Evaluator, user: str, group: str) -> list[str]:
    """The roles ``group`` holds that ``user`` may not read (``get_role``) or that hold a DENY:
    what he sees of the group decides, never its members."""
    return sorted(
        role
        for role in model.group_roles.get(group, ())
        if holds_deny(model, role) or not evaluator.authorize(user, "get_role", role, explain=False).allowed
    )


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
