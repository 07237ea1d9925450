"""Sets of facts remembered by how they were made, so that an answer kept over one set
(the implied-grants check, the read's index) is moved to the next by the facts that
differ, found without a set difference over every fact (~20,000 at issue 30's estate):

- :func:`joined`: a compile's facts, the model roles' Ranger roles kept between compiles
  (one set object while no role moved) joined with the facts it made this time (the
  focus's policies, the per-user roles they name), as a :class:`Joined` (the kept set is
  not copied). Two compiles joined from the very same kept set differ only where their
  own facts do (:func:`differ`).
- :func:`moved`: a read's facts made from an earlier read's by the facts of the keys a
  sync wrote (:meth:`~pushdown_ranger.reading.Reading._moved_facts`): they differ by
  those alone. The set is a :class:`Spread` (facts in 4,096 small frozen sets by hash),
  made from the earlier one by copying only the small sets those facts lie in.

Neither kind is ever changed once made: a snapshot another thread holds reads the same
facts however many sets are made from it.

Each set is remembered by object, kept alive with its parts (a few of the latest only),
so no other set can be taken for it; a set not remembered so (made by any other step) is
compared as before."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Set
from itertools import chain
from typing import Any, TypeVar

from pushdown.reconcile.plan import Fact

Facts = frozenset[Fact]
#: a kept set of facts (:func:`kept_moved`): a frozen set, or one spread
KeptSet = TypeVar("KeptSet", bound=Set[Fact])

#: the latest sets joined: (the set, the kept set, the set's own facts)
_JOINED: list[tuple[Set[Fact], Set[Fact], Facts]] = []
#: the latest sets moved: (the set, the set it was made from, facts gone, facts added)
_MOVED: list[tuple[Set[Fact], Set[Fact], Facts, Facts]] = []
#: the latest kept sets moved (:func:`kept_moved`): (the set, the set it was made from,
#: facts gone, facts added)
_KEPT: list[tuple[Set[Fact], Set[Fact], Facts, Facts]] = []
_LOCK = threading.Lock()
_KEEP = 4
#: the facts :func:`differ` visited (a set difference visits its first set), all its calls
#: (what a test bounds)
visited = 0
#: the facts and slots copied to make the sets :func:`joined` and :meth:`Spread.moved`
#: made, all their calls (what a test bounds)
copied = 0


class _Frozen(Set[Fact]):
    _whole: Facts | None
    """A set of facts that never changes once made (as a frozen set): its parts are frozen
    sets and tuples, shared with the sets it was made from, so two snapshots hold the
    facts they share once. Operators answer frozen sets."""

    __slots__ = ("_whole",)

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> frozenset[Any]:
        return frozenset(it)

    def pieces(self) -> tuple[Facts, ...]:
        """The frozen sets holding the facts (shared with the sets made from the same ones)."""
        raise NotImplementedError

    def whole(self) -> Facts:
        """The facts as one frozen set (a union of the pieces, in C), made once and kept with
        this set: for the steps that compare it with a set not made from it (set differences)."""
        found = self._whole
        if found is None:
            found = self._whole = frozenset().union(*self.pieces())
        return found

    def __hash__(self) -> int:
        return self._hash()


class Joined(_Frozen):
    """``kept | own`` without a copy of ``kept``: the kept set itself, with the facts of
    ``own`` it lacks (a visit of ``own`` alone)."""

    __slots__ = ("kept", "own")

    def __init__(self, kept: Set[Fact], own: Facts) -> None:
        global copied
        mine = own - kept if type(kept) is frozenset else frozenset(f for f in own if f not in kept)
        self.kept, self.own, self._whole = kept, mine, None
        with _LOCK:
            copied += len(own)

    def __contains__(self, fact: object) -> bool:
        return fact in self.own or fact in self.kept

    def __iter__(self) -> Iterator[Fact]:
        return chain(self.kept, self.own)

    def whole(self) -> Facts:
        found = self._whole
        if found is None:
            found = self._whole = whole(self.kept) | self.own
        return found

    def __len__(self) -> int:
        return len(self.kept) + len(self.own)

    def pieces(self) -> tuple[Facts, ...]:
        """The frozen sets holding the facts (shared with the sets made from the same ones)."""
        kept = self.kept
        return (*kept.pieces(), self.own) if isinstance(kept, _Frozen) else (whole(kept), self.own)


#: a :class:`Spread`'s slots: 64 by the hash's low bits, each 64 by the next ones
_WIDTH, _MASK, _SHIFT = 64, 63, 6
_Leaves = tuple["Facts | None", ...]


#: The fewest facts a read-back's set is spread for (:class:`Spread`): below as many as its
#: slots, most facts would sit alone in a slot, and copying a small frozen set costs less
#: than spreading and walking it (measured: ~1 ms a sync more at 1,000 facts).
SPREAD_FROM = 4096


class Spread(_Frozen):
    """A set of facts kept in 64 x 64 frozen sets by their hashes, so that a set made from
    another by a few facts gone and added (:meth:`moved`) copies the two tuples of slots
    and the small sets that hold those facts, sharing every other set with the one it was
    made from: never all the facts (~20,000 at issue 30's estate)."""

    __slots__ = ("_len", "_top")

    def __init__(self, top: tuple[_Leaves | None, ...], size: int) -> None:
        self._top, self._len, self._whole = top, size, None

    @classmethod
    def of(cls, facts: Iterable[Fact]) -> Spread:
        """The facts, spread (a visit of each)."""
        if isinstance(facts, Spread):
            return facts
        by_slot: dict[int, list[Fact]] = {}
        for fact in facts:
            h = hash(fact)
            by_slot.setdefault(h & _MASK | ((h >> _SHIFT) & _MASK) << _SHIFT, []).append(fact)
        top: list[list[Facts | None] | None] = [None] * _WIDTH
        size = 0
        for slot, found in by_slot.items():
            leaves = top[slot & _MASK]
            if leaves is None:
                leaves = top[slot & _MASK] = [None] * _WIDTH
            leaf = leaves[slot >> _SHIFT] = frozenset(found)
            size += len(leaf)
        out = cls(tuple(tuple(leaves) if leaves is not None else None for leaves in top), size)
        if type(facts) is frozenset:
            out._whole = facts  # the very facts, as one set already
        return out

    def __contains__(self, fact: object) -> bool:
        h = hash(fact)
        leaves = self._top[h & _MASK]
        if leaves is None:
            return False
        leaf = leaves[(h >> _SHIFT) & _MASK]
        return leaf is not None and fact in leaf

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled as its facts and spread again when loaded: the slots are chosen by hashes,
        # which another process (another string hash seed) answers differently
        return Spread.of, (self.whole(),)

    def __iter__(self) -> Iterator[Fact]:
        found = self._whole
        return iter(found) if found is not None else chain.from_iterable(self.pieces())

    def __len__(self) -> int:
        return self._len

    def pieces(self) -> tuple[Facts, ...]:
        """The frozen sets holding the facts (shared with the sets made from the same ones)."""
        return tuple(leaf for leaves in self._top if leaves for leaf in leaves if leaf is not None)

    def moved(self, gone: Iterable[Fact], added: Iterable[Fact]) -> Spread:
        """This set without ``gone``, with ``added`` (in that order), as a new set: this one
        is left as it was (a reader holding it sees it unchanged)."""
        global copied
        touched: dict[int, dict[int, tuple[set[Fact], set[Fact]]]] = {}
        for fact in gone:
            h = hash(fact)
            touched.setdefault(h & _MASK, {}).setdefault((h >> _SHIFT) & _MASK, (set(), set()))[0].add(fact)
        for fact in added:
            h = hash(fact)
            touched.setdefault(h & _MASK, {}).setdefault((h >> _SHIFT) & _MASK, (set(), set()))[1].add(fact)
        if not touched:
            return self
        top = list(self._top)
        size, count = self._len, _WIDTH
        for i, by_leaf in touched.items():
            old = top[i]
            leaves: list[Facts | None] = list(old) if old is not None else [None] * _WIDTH
            count += _WIDTH
            for j, (out, into) in by_leaf.items():
                leaf = leaves[j]
                was = len(leaf) if leaf is not None else 0
                new = ((leaf - out) if leaf is not None else frozenset()) | into
                count += was + len(into)
                leaves[j] = new or None
                size += len(new) - was
            top[i] = tuple(leaves) if any(leaf is not None for leaf in leaves) else None
        with _LOCK:
            copied += count
        return Spread(tuple(top), size)


#: the set types that never change once made: one proves its facts by being the same object
_FROZEN = (frozenset, Joined, Spread)


def whole(facts: Iterable[Fact]) -> Facts:
    """``facts`` as a frozen set: itself, a set of parts' :meth:`_Frozen.whole`, or a copy."""
    if isinstance(facts, _Frozen):
        return facts.whole()
    return facts if type(facts) is frozenset else frozenset(facts)


def frozen(facts: Iterable[Fact]) -> Set[Fact]:
    """``facts`` when a set that never changes (:data:`_FROZEN`), else a frozen copy."""
    return facts if type(facts) in _FROZEN else frozenset(facts)  # type: ignore[return-value]


def joined(kept: Set[Fact], own: Facts) -> Joined:
    """``kept | own`` (:class:`Joined`: no copy of ``kept``), remembered with its parts."""
    facts = Joined(kept, own)
    with _LOCK:
        _JOINED.insert(0, (facts, kept, facts.own))
        del _JOINED[_KEEP:]
    return facts


def parts(facts: Set[Fact]) -> tuple[Set[Fact], Facts] | None:
    """(the kept set, the set's own facts) of a set :func:`joined` made (``None``: not one)."""
    if type(facts) is Joined:
        return facts.kept, facts.own
    return None


def moved(facts: Set[Fact], base: Set[Fact], gone: Set[Fact], added: Set[Fact]) -> Set[Fact]:
    """Remembers ``facts`` as ``base`` without ``gone``, with ``added``: the caller made it
    so and proved ``gone`` held in ``base`` and ``added`` met nothing else of ``base``
    (its size is ``base``'s less ``gone``'s plus ``added``'s). Kept as the facts that differ:
    ``gone`` not added again, ``added`` not there before."""
    step = (facts, base, frozenset(gone) - frozenset(added), frozenset(added) - frozenset(gone))
    with _LOCK:
        _MOVED.insert(0, step)
        del _MOVED[_KEEP:]
    return facts


def kept_moved(kept: KeptSet, base: Set[Fact], gone: Iterable[Fact], added: Iterable[Fact]) -> KeptSet:
    """Remembers ``kept`` (the model roles' Ranger roles kept between compiles) as ``base``
    without ``gone``, with ``added``: the caller made it ``(base - gone) | added``, so a fact
    of one and not the other is among ``gone`` and ``added``. Two compiles :func:`joined`
    from ``base`` and from ``kept`` then differ only where their own facts and those do
    (:func:`known`: a visit of them, not of every kept role)."""
    step = (kept, base, frozenset(gone), frozenset(added))
    with _LOCK:
        _KEPT.insert(0, step)
        del _KEPT[_KEEP:]
    return kept


def made_by_moving(facts: Set[Fact]) -> bool:
    """Whether :func:`moved` remembers ``facts`` (a read-back's, made from an earlier read's)."""
    with _LOCK:
        return any(step[0] is facts for step in _MOVED)


def known(old: Set[Fact], new: Set[Fact]) -> tuple[Set[Fact], Set[Fact]] | None:
    """``(old - new, new - old)`` where :func:`joined` or :func:`moved` made them so (a
    visit of the facts that differ only), or the same set; else ``None``. Frozen sets
    only (:data:`_FROZEN`): a set that can change in place proves nothing by being the same
    object."""
    global visited
    if type(old) not in _FROZEN or type(new) not in _FROZEN:
        return None
    if old is new:
        return frozenset(), frozenset()
    with _LOCK:
        step = next((s for s in _MOVED if s[0] is new and s[1] is old), None)
        if step is not None:
            visited += len(step[2]) + len(step[3])
            return step[2], step[3]
        before = next(((k, o) for f, k, o in _JOINED if f is old), None)
        after = next(((k, o) for f, k, o in _JOINED if f is new), None)
        if before is not None and after is not None and before[0] is after[0]:
            # old = K | o, new = K | n over the one kept set K: a fact of K is in both, so
            # old - new = o - new and new - old = n - old (each a visit of the own facts, in C)
            visited += len(before[1]) + len(after[1])
            return before[1] - new, after[1] - old
        if before is not None and after is not None:
            kept = next((s for s in _KEPT if s[0] is after[0] and s[1] is before[0]), None)
            if kept is not None:
                # old = K | o, new = K' | n with K' = (K - g) | a: a fact of K and not of K'
                # is in g, one of K' and not of K in a, so a fact in both kept sets is in
                # both sets: old - new lies in o | g, new - old in n | a (a visit of those)
                visited += len(before[1]) + len(after[1]) + len(kept[2]) + len(kept[3])
                gone = frozenset(f for f in chain(before[1], kept[2]) if f in old and f not in new)
                added = frozenset(f for f in chain(after[1], kept[3]) if f in new and f not in old)
                return gone, added
    return None


def differ(old: Set[Fact], new: Set[Fact]) -> tuple[Set[Fact], Set[Fact]]:
    """``(old - new, new - old)``: :func:`known`, else two set differences."""
    global visited
    found = known(old, new)
    if found is not None:
        return found
    with _LOCK:
        visited += len(old) + len(new)
    old, new = whole(old), whole(new)  # a set of parts as one (made once): the differences in C
    return old - new, new - old


#: which part of a plan's answer a fact is kept in (:class:`Apart`): ``None``, the part
#: every diff looks at; else a name a diff selects (a Hive database, folded)
Where = Callable[[Fact], "str | None"]


class Apart:
    """A plan's ``(desired - held, held - desired)`` (:meth:`Backend.apart`), moved from
    the last pair's answer: when each set is the last one's or :func:`known` from it, a
    fact neither step touched is in the answer exactly as it was (it is in each set as it
    was), so only the facts the steps touched are looked at again; else the two set
    differences. The answer kept holds both sets alive (no other set is taken for them).

    The answer is kept in parts by ``where`` (a Hive policy shaped as pushdown writes them
    by its database, anything else in the part every diff looks at): asked for some parts
    (``parts``, a scoped diff's databases), it hands those and the common part, looking at
    nothing else; the facts of other parts are in the answer as they were, untouched."""

    def __init__(self, where: Where = lambda fact: None) -> None:
        self._where = where
        #: (desired, held, the answer's two sides, each by part)
        self._last: (
            tuple[Set[Fact], Set[Fact], dict[str | None, set[Fact]], dict[str | None, set[Fact]]] | None
        ) = None
        self._lock = threading.Lock()
        #: the facts visited (those touched, those of the parts handed; or both sets), all calls
        self.visited = 0

    def __call__(
        self, desired: Set[Fact], held: Set[Fact], parts: Set[str] | None = None
    ) -> tuple[Set[Fact], Set[Fact]]:
        """``(desired - held, held - desired)``; given ``parts``, without the facts of the
        parts not named (those whose ``where`` is neither ``None`` nor in ``parts``)."""
        with self._lock:
            last = self._last
            if last is not None:
                wanted, had = known(last[0], desired), known(last[1], held)
                if wanted is not None and had is not None:
                    want, have = last[2], last[3]
                    touched = frozenset().union(*wanted, *had)
                    self._last = None  # moved in place: kept again once moved whole
                    for fact in touched:
                        where = self._where(fact)
                        _put(want, where, fact, fact in desired and fact not in held)
                        _put(have, where, fact, fact in held and fact not in desired)
                    self.visited += len(touched)
                    self._last = (desired, held, want, have)
                    return self._handed(want, parts), self._handed(have, parts)
            self.visited += len(desired) + len(held)
            want, have = {}, {}
            mine, read = whole(desired), whole(held)  # a set of parts as one: the differences in C
            for fact in mine - read:
                want.setdefault(self._where(fact), set()).add(fact)
            for fact in read - mine:
                have.setdefault(self._where(fact), set()).add(fact)
            self._last = (desired, held, want, have)
            return self._handed(want, parts), self._handed(have, parts)

    def _handed(self, side: dict[str | None, set[Fact]], parts: Set[str] | None) -> frozenset[Fact]:
        """The facts of ``side`` in the common part and in ``parts`` (every part: ``None``),
        counted as visited."""
        if parts is None:
            chosen = list(side.values())
        else:
            chosen = [side[k] for k in (None, *parts) if k in side]
        out = frozenset().union(*chosen)
        self.visited += len(out)
        return out


def _put(side: dict[str | None, set[Fact]], where: str | None, fact: Fact, present: bool) -> None:
    part = side.get(where)
    if present:
        if part is None:
            side[where] = part = set()
        part.add(fact)
    elif part is not None:
        part.discard(fact)
        if not part:
            del side[where]
