"""Which model users and roles pushdown names in Ranger, and with which members. Pure.

Ranger resolves a user's groups on the enforcing host (usersync, the OS), not from the
model. So no Ranger role pushdown writes has a group member: a role's members are the
model users holding it, directly or through a group of the model (expanded here, as the
Hive backend does). Neither a DENY nor an ALLOW then depends on group resolution pushdown
cannot see: a host that puts a user in a group the model does not (or leaves one out)
changes nothing pushdown wrote. A group named like Ranger's built-in ``public`` is
therefore just its model members.

Names that Ranger would read as something else, or that become one name in Ranger, are
refused: the user or role gets nothing from pushdown (narrower) and a note says why.

- a user whose Ranger name (after ``map_principal``) is empty or holds ``*``, ``?``,
  ``{``, ``}`` or ``\\`` (Ranger's wildcards and ``{USER}`` / ``{OWNER}`` macros);
- users whose Ranger names are equal but for case, over the whole model (Ranger's user
  store and role names compare without case on the usual databases): one Ranger
  principal would get what either is allowed (users mapping to the very same name are
  compiled apart and folded into it by :mod:`pushdown_ranger.collide`: the intersection;
  refused here only when something else calls the compile with such names);
- a role whose Ranger name (``role_prefix`` + role) holds such a character, or equals
  another role's but for case.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pushdown.decide.requirements import OPERATIONS, AllOf, AnyOf, Can, Has
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.identity import Identity
from pushdown_ranger.compile.collide import MARK
from pushdown_ranger.compile.naming import RangerNaming, exact


@dataclass(frozen=True)
class Principals:
    """The users and roles pushdown leaves out of Ranger, and why."""

    refused_users: frozenset[str] = frozenset()
    refused_roles: frozenset[str] = frozenset()
    notes: tuple[str, ...] = ()

    def holders(self, model: Model, role: str) -> frozenset[str]:
        """The model users holding ``role`` (groups expanded) that Ranger may name."""
        return frozenset(model.holders_of(role)) - self.refused_users

    def users(self, users: Iterable[str]) -> frozenset[str]:
        return frozenset(users) - self.refused_users


def principals(model: Model, naming: RangerNaming) -> Principals:
    """Refuse what Ranger cannot name as the model means it (whole model, not a scope),
    through the core's :class:`~pushdown.reconcile.identity.Identity`; case is compared
    here, on the Ranger names themselves."""
    notes: list[str] = []
    users = Identity.of(model.users, naming.user, unusable=_inexact)
    bad_users = _refused(users, "user", "nothing pushed for it (narrower)", notes)
    roles = Identity.of(model.roles, naming.role, unusable=_inexact)
    bad_roles = _refused(roles, "role", "not made; its holders get per-user roles", notes)
    return Principals(frozenset(bad_users), frozenset(bad_roles), tuple(notes))


#: the last :func:`refused_roles` answer: (the model's roles, the role prefix, those
#: refused, the model and its version and roster stamps asked; the model kept alive with
#: its answer)
_REFUSED: list[tuple[frozenset[str], str, frozenset[str], Model, int, int]] = []


def refused_roles(model: Model, naming: RangerNaming) -> frozenset[str]:
    """:func:`principals`' ``refused_roles`` (the roles only), made again only when the
    model's roles or the role prefix moved (a role created or deleted may make another one
    refused, or no longer); the roles proved as they were by the model's roster stamps
    (the same model object, no role created or deleted: :attr:`Model.roster_stamped`),
    else compared, once per model version."""
    prefix = naming.role_prefix
    last = _REFUSED[0] if _REFUSED else None
    if last is not None and last[3] is model and last[1] == prefix:
        if last[4] == model.version or last[5] == model.roster_stamped:
            return last[2]
    roles = frozenset(model.roles)
    if last is not None and last[1] == prefix and last[0] == roles:
        refused = last[2]
    else:
        refused = frozenset(_refused(Identity.of(roles, naming.role, unusable=_inexact), "role", "", []))
    _REFUSED[:] = [(roles, prefix, refused, model, model.version, model.roster_stamped)]
    return refused


def _inexact(name: str) -> str | None:
    """Why Ranger would read ``name`` as something else (``None``: it would not). A NUL is
    let through: the compile's own names for colliding users hold one
    (:mod:`pushdown_ranger.compile.collide`)."""
    if exact(name) and name == name.strip():
        return None
    return "blank, or a character Ranger reads as a wildcard or a {USER}/{OWNER} macro"


def _refused(identity: Identity, kind: str, then: str, notes: list[str]) -> set[str]:
    """The names refused: unusable ones, and names one in Ranger but for case (compared
    on the Ranger name itself, :func:`_base`), or the very same name given to several."""
    out = set(identity.refused)
    for model_name, why in sorted(identity.refused.items()):
        notes.append(f"{kind} {model_name}: {why}; {then}")
    folded: dict[str, list[str]] = {}
    for model_name, ranger_name in identity.names.items():
        folded.setdefault(_base(ranger_name).casefold(), []).append(model_name)
    for same in folded.values():
        full = [identity.names[m] for m in same]
        if len({_base(n) for n in full}) > 1 or len(set(full)) < len(full):
            out.update(same)
            listed = ", ".join(sorted(same))
            shown = ", ".join(repr(n) for n in sorted({_base(n) for n in full}))
            notes.append(
                f"{kind}s {listed}: one Ranger name but for case ({shown}), which would "
                f"give each what any of them is allowed; {then}"
            )
    return out


def _base(name: str) -> str:
    """The Ranger name itself: users that map to one name are compiled apart under
    ``name`` + :data:`~pushdown_ranger.compile.collide.MARK` + user, then folded into it."""
    return name.split(MARK, 1)[0]


def denied_privileges(
    model: Model, users: Iterable[str] | None = None
) -> dict[str, set[tuple[ObjectRef, Privilege]]]:
    """Per user holding a DENY, (object, privilege) of each of their DENYs; of ``users``
    only when given (their roles' grants looked at, not every role's)."""
    out: dict[str, set[tuple[ObjectRef, Privilege]]] = {}
    if users is None:
        for role, grants in model.roles.items():
            denied = {(g.object, g.privilege) for g in grants if g.condition is Condition.DENY}
            if denied:
                for user in model.holders_of(role):
                    out.setdefault(user, set()).update(denied)
        return out
    by_role: dict[str, set[tuple[ObjectRef, Privilege]]] = {}
    for user in users:
        for role in model.roles_of(user):
            held = by_role.get(role)
            if held is None:
                grants = model.roles.get(role) or set()
                held = by_role[role] = {
                    (g.object, g.privilege) for g in grants if g.condition is Condition.DENY
                }
            if held:
                out.setdefault(user, set()).update(held)
    return out


@functools.cache
def privileges_of(operation: str) -> frozenset[Privilege]:
    """Every privilege an operation's requirements name (through the operations it needs)."""
    return _named(OPERATIONS[operation].requires)


def _named(term: Any) -> frozenset[Privilege]:
    if isinstance(term, Has):
        return frozenset(term.privileges)
    if isinstance(term, Can):
        return privileges_of(term.operation)
    if isinstance(term, AllOf | AnyOf):
        return frozenset().union(*(_named(t) for t in term.terms))
    return frozenset()
