"""Model users and the metastore user names they map to, over the whole model.

``pushdown_map_principal`` may map ``alice`` to ``alice@CORP``; a sync must therefore
say which model user a metastore name stands for, and which names two users share,
against every user of the model, never only the users a scope names (a sync scoped to
``bob`` must not grant the principal that ``Bob``, denied, maps to as well).

- a name two or more model users map to is *withheld*: none of them gets anything; so
  are names that are one once case is folded (``Bob`` and ``bob``: a metastore whose
  database compares text without case, as MySQL's usual collation does, holds them as
  one principal);
- a user whose mapping fails or gives no usable name gets nothing either (a note says
  so), and nothing is passed through to the metastore;
- a name no model user maps to any more (a removed user, a directory member who left
  a group, an earlier mapping) is an *orphan*: the backend's own grants and role
  memberships there are unwanted wherever a scope reads them;
- a user no longer in the model is still mapped (the mapping is recomputed), so the
  scope of its removal reaches the metastore user it mapped to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pushdown.model.state import Model
from pushdown.reconcile.scope import Region, Resolved

Naming = Callable[[str], str]


def _map(naming: Naming, user: str) -> tuple[str | None, str]:
    """The metastore name of ``user``, or ``None`` and why not."""
    try:
        name = naming(user)
    except Exception as exc:  # a plugin's mapping: whatever it raises, the user gets nothing
        return None, f"pushdown_map_principal failed for user {user!r} ({type(exc).__name__}: {exc})"
    if not isinstance(name, str) or not name or name != name.strip() or "\x00" in name:
        return None, f"pushdown_map_principal gave user {user!r} the unusable metastore name {name!r}"
    return name, ""


@dataclass(frozen=True)
class Identity:
    naming: Naming
    #: model user -> metastore user name (the users that map to a usable name)
    names: dict[str, str]
    #: metastore user name -> the model users that map to it
    users: dict[str, frozenset[str]]
    #: model user -> why it maps to no usable name
    refused: dict[str, str]

    @classmethod
    def of(cls, model: Model, naming: Naming) -> Identity:
        names: dict[str, str] = {}
        refused: dict[str, str] = {}
        for user in model.users:
            name, why = _map(naming, user)
            if name is None:
                refused[user] = why
            else:
                names[user] = name
        users: dict[str, set[str]] = {}
        folded: dict[str, set[str]] = {}
        for user, name in names.items():
            users.setdefault(name, set()).add(user)
            folded.setdefault(name.casefold(), set()).add(name)
        # names one once case is folded are one name on a metastore whose database compares
        # without case (MySQL's usual collation): each stands for all of their users
        for spellings in folded.values():
            if len(spellings) > 1:
                together = set().union(*(users[n] for n in spellings))
                users.update({n: together for n in spellings})
        return cls(naming, names, {n: frozenset(us) for n, us in users.items()}, refused)

    def name(self, user: str) -> str | None:
        """The metastore name of ``user``, recomputed for a user no longer in the model."""
        if user in self.names:
            return self.names[user]
        return None if user in self.refused else _map(self.naming, user)[0]

    def names_of(self, users: Iterable[str]) -> frozenset[str]:
        return frozenset(n for u in users if (n := self.name(u)) is not None)

    def sharing(self, users: Iterable[str]) -> frozenset[str]:
        """``users`` and every model user whose metastore name is one of theirs: what those
        get depends on all of them (a clash withholds, a removal may end it)."""
        out = set(users)
        for name in self.names_of(users):
            out |= self.users.get(name, frozenset())
        return frozenset(out)

    def widened(self, scope: Resolved) -> Resolved:
        """Each region of ``scope`` with the users sharing its users' names."""
        return Resolved(
            tuple(r if r.users is None else Region(self.sharing(r.users), r.roots) for r in scope.regions)
        )

    def orphan(self, name: str) -> bool:
        """No model user maps to ``name`` (any more)."""
        return name not in self.users

    def clashes(self) -> dict[str, frozenset[str]]:
        return {n: us for n, us in self.users.items() if len(us) > 1}

    @property
    def withheld(self) -> frozenset[str]:
        """The users that get nothing: their name clashes, or they have none."""
        return frozenset(u for us in self.clashes().values() for u in us) | frozenset(self.refused)

    def notes(self) -> set[str]:
        out = {
            f"users {', '.join(sorted(users))} all map to metastore user {name!r}: their grants are withheld "
            "(narrower) until pushdown_map_principal tells them apart"
            for name, users in self.clashes().items()
        }
        return out | {f"{why}: the user gets nothing (narrower)" for why in self.refused.values()}
