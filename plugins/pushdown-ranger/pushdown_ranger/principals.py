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
  principal would get what either is allowed;
- a role whose Ranger name (``role_prefix`` + role) holds such a character, or equals
  another role's but for case.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pushdown.model.state import Model
from pushdown_ranger.naming import Naming, exact


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


def principals(model: Model, naming: Naming) -> Principals:
    """Refuse what Ranger cannot name as the model means it (whole model, not a scope)."""
    notes: list[str] = []
    users = {u: naming.user(u) for u in model.users}
    bad_users = _refused(users, "user", "nothing pushed for it (narrower)", notes)
    roles = {r: naming.role(r) for r in model.roles}
    bad_roles = _refused(roles, "role", "not made; its holders get per-user roles", notes)
    return Principals(frozenset(bad_users), frozenset(bad_roles), tuple(notes))


def _refused(names: dict[str, str], kind: str, then: str, notes: list[str]) -> set[str]:
    out: set[str] = set()
    folded: dict[str, list[str]] = {}
    for model_name, ranger_name in names.items():
        if not exact(ranger_name) or ranger_name != ranger_name.strip():
            out.add(model_name)
            notes.append(
                f"{kind} {model_name}: Ranger name {ranger_name!r} holds a character Ranger reads as a "
                f"wildcard or a {{USER}}/{{OWNER}} macro (or is blank); {then}"
            )
        folded.setdefault(ranger_name.casefold(), []).append(model_name)
    for same in folded.values():
        if len(same) > 1:
            out.update(same)
            listed = ", ".join(sorted(same))
            notes.append(
                f"{kind}s {listed}: one Ranger name but for case ({names[same[0]]!r}), which would "
                f"give each what any of them is allowed; {then}"
            )
    return out
