"""Model names and the server names they map to, over the whole model.

``pushdown_map_principal`` may map ``alice`` to ``alice@CORP``; a sync must therefore
say which model user a server name stands for, and which names two users share,
against every user of the model, never only the users a scope names (a sync scoped to
``bob`` must not grant the principal that ``Bob``, denied, maps to as well). Every
backend maps its users (and Ranger its roles) through :class:`Identity`:

- a name two or more model names map to *clashes*; where the backend says its server
  compares names without case (``caseless``), so do names that are one once case is
  folded (``Bob`` and ``bob``). What a clash means is the backend's: the Hive Metastore
  and MySQL withhold everything from those users, Ranger gives the shared principal only
  what all of them are allowed;
- a name whose mapping raises, or gives a name the backend cannot use (``unusable``
  says why), is *refused*: that user gets nothing and a note says so, and nothing is
  passed through to the server;
- a server name no model user maps to any more (a removed user, an earlier mapping) is
  an *orphan*;
- a name no longer in the model is still mapped (the mapping is recomputed), so the
  scope of its removal reaches the server name it mapped to.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from pushdown.reconcile.scope import Region, Resolved

Mapper = Callable[[str], str]


def plain(name: str) -> str | None:
    """Why ``name`` is no usable server name (``None``: it is): the default check, a
    non-empty name without NUL and without blanks around it (a backend passes its own,
    which should refuse at least empty and blank-edged names)."""
    if not name or name != name.strip() or "\x00" in name:
        return "an empty, blank-edged or NUL-holding name"
    return None


def map_one(
    mapper: Mapper, user: str, unusable: Callable[[str], str | None] = plain
) -> tuple[str | None, str]:
    """The server name of ``user``, or ``None`` and why not."""
    try:
        name = mapper(user)
    except Exception as exc:  # a plugin's mapping: whatever it raises, the user gets nothing
        return None, f"pushdown_map_principal failed for {user!r} ({type(exc).__name__}: {exc})"
    why = unusable(name) if isinstance(name, str) else "not a string"
    if why is not None:
        return None, f"pushdown_map_principal gave {user!r} the unusable name {name!r} ({why})"
    return name, ""


@dataclass(frozen=True)
class Identity:
    """Every model name's server name, the names several share, and the names refused."""

    mapper: Mapper
    #: model name -> server name (those that map to a usable name)
    names: Mapping[str, str]
    #: server name -> the model names that map to it (with ``caseless``: to any spelling of it)
    users: Mapping[str, frozenset[str]]
    #: model name -> why it maps to no usable name
    refused: Mapping[str, str]
    unusable: Callable[[str], str | None] = plain
    #: the clashes, when the maker kept them (:class:`KeptIdentity`); else found on demand
    known_clashes: Mapping[str, frozenset[str]] | None = None

    @classmethod
    def of(
        cls,
        users: Iterable[str],
        mapper: Mapper,
        *,
        caseless: bool = False,
        unusable: Callable[[str], str | None] = plain,
    ) -> Identity:
        """Map every one of ``users`` (the whole model's, never a scope's)."""
        names: dict[str, str] = {}
        refused: dict[str, str] = {}
        for user in sorted(users):
            name, why = map_one(mapper, user, unusable)
            if name is None:
                refused[user] = why
            else:
                names[user] = name
        return cls(mapper, names, _shared(names, caseless), refused, unusable)

    def name(self, user: str) -> str | None:
        """The server name of ``user``, recomputed for a name no longer in the model."""
        if user in self.names:
            return self.names[user]
        return None if user in self.refused else map_one(self.mapper, user, self.unusable)[0]

    def names_of(self, users: Iterable[str]) -> frozenset[str]:
        return frozenset(n for u in users if (n := self.name(u)) is not None)

    def sharing(self, users: Iterable[str]) -> frozenset[str]:
        """``users`` and every model name whose server name is one of theirs: what those
        get depends on all of them (a clash withholds, a removal may end it)."""
        out = set(users)
        for name in self.names_of(users):
            out |= self.users.get(name, frozenset())
        return frozenset(out)

    def widened(self, scope: Resolved) -> Resolved:
        """Each region of ``scope`` with the users sharing its users' server names."""
        return Resolved(
            tuple(r if r.users is None else Region(self.sharing(r.users), r.roots) for r in scope.regions)
        )

    def orphan(self, name: str) -> bool:
        """No model name maps to ``name`` (any more)."""
        return name not in self.users

    def clashes(self) -> dict[str, frozenset[str]]:
        """Server name -> the model names (two or more) that share it."""
        if self.known_clashes is not None:
            return dict(self.known_clashes)
        return {n: us for n, us in self.users.items() if len(us) > 1}

    @property
    def withheld(self) -> frozenset[str]:
        """The model names that clash with another, or have no usable server name."""
        return frozenset(u for us in self.clashes().values() for u in us) | frozenset(self.refused)


def _shared(names: Mapping[str, str], caseless: bool) -> dict[str, frozenset[str]]:
    users: dict[str, set[str]] = {}
    folded: dict[str, set[str]] = {}
    for user, name in names.items():
        users.setdefault(name, set()).add(user)
        folded.setdefault(name.casefold(), set()).add(name)
    if caseless:  # names one once case is folded are one name there: each stands for all
        for spellings in folded.values():
            if len(spellings) > 1:
                together = set().union(*(users[n] for n in spellings))
                users.update({n: together for n in spellings})
    return {n: frozenset(us) for n, us in users.items()}


class KeptIdentity:
    """An :class:`Identity` kept across syncs, so a sync maps the users that changed, not
    every user of the model (cost follows the change), while clashes stay whole-model.

    ``of(users, fresh)``: users added since the last call are mapped, users gone are
    dropped; ``fresh`` (the users a sync is about to grant to; ``None``: everyone) are
    mapped again, and if any of them now maps otherwise than kept (the hook's answer
    changed underneath), everything is mapped again before anything is granted. A new
    mapper (the hook or its settings changed: a new backend, a new naming) starts a new
    keeper, and so does a change of ``version()`` (the hook's implementations).
    Kept answers are trusted only while ``stable()`` says the mapping cannot change
    underneath (no plugin implements ``pushdown_map_principal``: the mapping is then a pure
    function of the backend's settings); otherwise a sync that grants to anyone maps every
    user again, since a user outside its scope (carol, now mapped to ``bob``) may clash
    with one inside it, and only a whole-model mapping sees that.
    ``roster``: the object ``users`` are of and its count of the events that add or remove
    one (:attr:`Model.roster_stamped`): while both are those of the last call (the object
    the very same, kept alive), ``users`` are the last call's, taken without comparing
    them (a pass over every user); else compared as they stand. ``calls`` counts the
    mapper's calls (what a test bounds). The indexes are changed copy-on-write, so an
    Identity handed out never changes."""

    def __init__(
        self,
        mapper: Mapper,
        *,
        caseless: bool = False,
        unusable: Callable[[str], str | None] = plain,
        version: Callable[[], object] = lambda: None,
        stable: Callable[[], bool] = lambda: False,
    ) -> None:
        self.mapper, self.caseless, self.unusable = mapper, caseless, unusable
        self.version, self.stable = version, stable
        self._seen_version: object = None
        self.calls = 0
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        #: the users mapped (kept or refused), and the Identity of them handed out last
        self._wanted: frozenset[str] = frozenset()
        self._handed: Identity | None = None
        self._names: dict[str, str] = {}
        self._refused: dict[str, str] = {}
        self._holders: dict[str, frozenset[str]] = {}  # server name -> model names (as spelled)
        self._spellings: dict[str, frozenset[str]] = {}  # folded server name -> its spellings
        self._clashing: set[str] = set()  # folded server names two or more users share
        #: (object, count) of the call that last made ``_wanted`` the users given
        self._roster: tuple[object, int] | None = None

    def _map(self, user: str) -> tuple[str | None, str]:
        self.calls += 1
        return map_one(self.mapper, user, self.unusable)

    def _kept(self, user: str) -> tuple[str | None, str]:
        if user in self._names:
            return self._names[user], ""
        return None, self._refused[user]

    def of(
        self,
        users: Collection[str],
        fresh: Iterable[str] | None = None,
        *,
        roster: tuple[object, int] | None = None,
    ) -> Identity:
        with self._lock:
            version = self.version()
            fresh = None if fresh is None else set(fresh)
            if (
                version != self._seen_version
                or fresh is None
                or (fresh and not self.stable())  # a hook may answer otherwise for anyone
                or any(self._map(u)[0] != self._kept(u)[0] for u in fresh if u in self._wanted)
            ):  # everyone, or a kept answer went stale: map everyone again
                self._reset()
                self._seen_version = version
            known, last = self._wanted, self._roster
            if roster is not None and last is not None and last[0] is roster[0] and last[1] == roster[1]:
                pass  # the same object, nobody added or removed since: the users kept
            elif users != known:  # one comparison in C; the walk below only when users changed
                wanted = frozenset(users)
                for gone in known - wanted:
                    self._drop(gone)
                for user in sorted(wanted - known):
                    self._add(user, self._map(user))
                self._wanted = wanted
            self._roster = roster
            if self._handed is None:  # built again only after a user was mapped or dropped
                self._handed = self._identity()
            return self._handed

    def _add(self, user: str, answer: tuple[str | None, str]) -> None:
        self._handed = None
        name, why = answer
        if name is None:
            self._refused[user] = why
            return
        self._names[user] = name
        self._holders[name] = self._holders.get(name, frozenset()) | {user}
        fold = name.casefold()
        self._spellings[fold] = self._spellings.get(fold, frozenset()) | {name}
        self._recount(fold)

    def _drop(self, user: str) -> None:
        self._handed = None
        if self._refused.pop(user, None) is not None:
            return
        name = self._names.pop(user)
        left = self._holders[name] - {user}
        fold = name.casefold()
        if left:
            self._holders[name] = left
        else:
            del self._holders[name]
            spellings = self._spellings[fold] - {name}
            if spellings:
                self._spellings[fold] = spellings
            else:
                del self._spellings[fold]
        self._recount(fold)

    def _recount(self, fold: str) -> None:
        spellings = self._spellings.get(fold, frozenset())
        if self.caseless:
            many = sum(len(self._holders[n]) for n in spellings) > 1
        else:
            many = any(len(self._holders[n]) > 1 for n in spellings)
        if many:
            self._clashing.add(fold)
        else:
            self._clashing.discard(fold)

    def _identity(self) -> Identity:
        users: Mapping[str, frozenset[str]] = dict(self._holders)
        clashing: dict[str, frozenset[str]] = {}
        for fold in self._clashing:
            spellings = self._spellings[fold]
            together = frozenset().union(*(self._holders[n] for n in spellings))
            for n in spellings:
                if self.caseless:
                    clashing[n] = together
                elif len(self._holders[n]) > 1:
                    clashing[n] = self._holders[n]
        if self.caseless and clashing:
            users = {**users, **clashing}
        return Identity(self.mapper, dict(self._names), users, dict(self._refused), self.unusable, clashing)


def inverse(
    users: Iterable[str],
    names: Iterable[str],
    mapper: Mapper,
    *,
    caseless: bool = False,
    unusable: Callable[[str], str | None] = plain,
    describe: Callable[[str], str] = lambda name: f"server name {name!r}",
) -> dict[str, tuple[str | None, str]]:
    """Each server name of ``names`` -> (its model user, "") or (``None``, why not): the
    mapping a sync uses inverted, for an import. The candidates are the store's ``users``
    and the server's own ``names`` whose mapped name no store user's is (compared once case
    is folded, with ``caseless``). A name is a candidate's only when that candidate maps
    to exactly it and no other does (with ``caseless``: to no other spelling of it), since
    a sync withholds a shared name's grants: never someone else's. ``describe`` names a
    server name in the reasons."""
    fold: Callable[[str], str] = str.casefold if caseless else (lambda n: n)
    users, names = set(users), set(names)
    store = Identity.of(users, mapper, caseless=caseless, unusable=unusable)
    taken = {fold(n) for n in store.users}
    extra = set()
    for name in names - users:
        mapped = store.name(name)
        if mapped is not None and fold(mapped) not in taken:
            extra.add(name)
    identity = Identity.of(users | extra, mapper, caseless=caseless, unusable=unusable)
    out: dict[str, tuple[str | None, str]] = {}
    for name in sorted(names):
        holders = identity.users.get(name, frozenset())
        if not holders:
            out[name] = (None, f"no model user maps to {describe(name)} (pushdown_map_principal)")
        elif len(holders) > 1:
            out[name] = (
                None,
                f"model users {', '.join(sorted(holders))} all map to {describe(name)} "
                "(pushdown_map_principal): a sync withholds their grants",
            )
        else:
            (user,) = holders
            out[name] = (user, "")
    return out
