""":func:`pushdown_ranger.factsets.differ` answers as two set differences over every fact,
whatever sets it is given: sets joined from one kept set or from different ones (a role
moved: the kept set made again), sets moved from another by a read-back's keys or from a
set that is not the one given, sets made otherwise, equal sets of other objects."""

from __future__ import annotations

import random

from pushdown_ranger import factsets
from pushdown_ranger.facts import PolicyFact, RoleFact

POOL = [RoleFact(f"pd_r{i}", frozenset({f"u{i % 7}"})) for i in range(30)]
POOL += [
    PolicyFact("hive", (("database", (f"d{i}",), False),), frozenset({(f"pd_r{i}", "select")}))
    for i in range(30)
]


def _some(rng: random.Random, k: int) -> frozenset[object]:
    return frozenset(rng.sample(POOL, k))


def test_differ_answers_as_the_set_differences_over_random_sets() -> None:
    rng = random.Random(30)
    kept = _some(rng, 20)
    last: frozenset[object] = factsets.joined(kept, _some(rng, 5))  # type: ignore[arg-type]
    fast = 0
    for _ in range(2000):
        kind = rng.random()
        if kind < 0.35:  # a compile: the kept set (now and then made again) and its own facts
            if rng.random() < 0.2:
                kept = kept ^ _some(rng, 2) if rng.random() < 0.5 else frozenset(kept)
            new = factsets.joined(kept, _some(rng, rng.randrange(0, 8)))  # type: ignore[arg-type]
        elif kind < 0.7:  # a read-back: some facts out, some in, one per key
            base = last if rng.random() < 0.8 else frozenset(rng.sample(POOL, 25))
            gone = frozenset(rng.sample(sorted(base, key=str), min(3, len(base))))
            added = _some(rng, 3) - (base - gone)
            new = factsets.moved((base - gone) | added, base, gone, added)  # type: ignore[arg-type]
        elif kind < 0.85:  # an equal set, another object
            new = frozenset(last)
        else:
            new = _some(rng, rng.randrange(0, 40))
        before = factsets.visited
        assert factsets.differ(last, new) == (last - new, new - last)
        fast += factsets.visited - before < len(last) + len(new)
        last = new
    assert fast > 300  # the parts were used, not only the differences over every fact


def test_a_set_moved_from_another_base_is_not_taken_for_its_step() -> None:
    """A set remembered as moved from ``base`` answers by its step only against ``base``
    itself: against an equal set of another object, or another set, it is compared."""
    base = frozenset(POOL[:10])
    gone, added = frozenset(POOL[:2]), frozenset(POOL[20:22])
    new = factsets.moved((base - gone) | added, base, gone, added)  # type: ignore[arg-type]
    other = frozenset(POOL[1:10])
    assert factsets.differ(other, new) == (other - new, new - other)
    assert factsets.differ(base, new) == (gone, added)


def test_sets_joined_from_different_kept_sets_are_compared() -> None:
    """A role moved (the kept set made again, one role's fact changed): the parts prove
    nothing, the sets are compared."""
    kept = frozenset(POOL[:10])
    old = factsets.joined(kept, frozenset(POOL[40:42]))  # type: ignore[arg-type]
    moved_kept = (kept - {POOL[0]}) | {RoleFact("pd_r0", frozenset({"someone"}))}
    new = factsets.joined(moved_kept, frozenset(POOL[40:42]))  # type: ignore[arg-type]
    assert (
        factsets.differ(old, new)
        == (old - new, new - old)
        == ({POOL[0]}, {RoleFact("pd_r0", frozenset({"someone"}))})
    )


def test_sets_joined_from_kept_sets_moved_answer_as_the_set_differences_over_random_sets() -> None:
    """A membership moves the kept roles (:func:`factsets.kept_moved`: ``(K - gone) | added``,
    frozen or spread): two sets joined from the kept sets before and after answer by their
    own facts and those moved, as the set differences over every fact, whatever ``gone``
    and ``added`` hold (a fact gone that the kept set lacked, one added it held already,
    one both gone and added); a step from another kept set proves nothing."""
    rng = random.Random(31)
    kept: frozenset[object] | factsets.Spread = _some(rng, 20)
    last: object = factsets.joined(kept, _some(rng, 5))  # type: ignore[arg-type]
    fast = 0
    for _ in range(2000):
        if rng.random() < 0.7:  # a membership: the kept set moved, remembered
            gone, added = _some(rng, rng.randrange(0, 4)), _some(rng, rng.randrange(0, 4))
            if rng.random() < 0.3:
                gone |= frozenset(rng.sample(sorted(kept, key=str), min(2, len(kept))))
            if isinstance(kept, factsets.Spread):
                moved: object = kept.moved(gone, added)
            else:
                moved = (kept - gone) | added
            kept = factsets.kept_moved(moved, kept, gone, added)  # type: ignore[type-var,arg-type]
        elif rng.random() < 0.5:  # the kept set made again (frozen or spread): nothing remembered
            whole = _some(rng, rng.randrange(0, 30))
            kept = factsets.Spread.of(whole) if rng.random() < 0.5 else whole  # type: ignore[arg-type]
        new = factsets.joined(kept, _some(rng, rng.randrange(0, 8)))  # type: ignore[arg-type]
        old_whole, new_whole = frozenset(last), frozenset(new)  # type: ignore[call-overload]
        before = factsets.visited
        assert factsets.differ(last, new) == (old_whole - new_whole, new_whole - old_whole)  # type: ignore[arg-type]
        fast += factsets.visited - before < len(old_whole) + len(new_whole)
        last = new
    assert fast > 500  # the kept sets' steps were used


def test_apart_answers_as_the_set_differences_over_random_plans() -> None:
    """A plan's ``(desired - held, held - desired)`` (``RangerBackend.apart``) over random
    pairs: compiles joined from a kept set (made again now and then) or made otherwise,
    reads moved by a few facts from the last read or from another set, a pair repeated
    (the plan and the read-back diffed against one compile)."""
    rng = random.Random(31)
    apart = factsets.Apart()
    kept = _some(rng, 20)
    desired: frozenset[object] = factsets.joined(kept, _some(rng, 5))  # type: ignore[arg-type]
    held = _some(rng, 25)
    moved = 0
    for _ in range(2000):
        kind = rng.random()
        if kind < 0.4:
            if rng.random() < 0.1:
                kept = kept ^ _some(rng, 2)
            own = _some(rng, rng.randrange(0, 8))
            desired = factsets.joined(kept, own) if rng.random() < 0.9 else kept | own  # type: ignore[arg-type]
        elif kind < 0.8:
            base = held if rng.random() < 0.9 else _some(rng, 25)
            gone = frozenset(rng.sample(sorted(base, key=str), min(3, len(base))))
            added = _some(rng, 3) - (base - gone)
            held = factsets.moved((base - gone) | added, base, gone, added)  # type: ignore[arg-type]
        before = apart.visited
        assert apart(desired, held) == (desired - held, held - desired)
        moved += apart.visited - before < len(desired) + len(held)
    assert moved > 500  # the last answer was moved, not only made again


def test_apart_given_a_focus_answers_as_the_set_differences_it_covers_over_random_plans() -> None:
    """Asked for a scoped diff's databases, ``RangerBackend.apart``'s answer kept apart by
    database hands exactly the set differences its cover (``scoping.Covers``) keeps: the
    focus's Hive policies (their database in any case), and every role, policy of another
    service and Hive policy pushdown does not shape (several databases, a wildcard), over
    random pairs and foci, with whole-set answers between them."""
    from pushdown_ranger.scoping import Covers, covered_database

    def hive(
        resources: tuple[tuple[str, tuple[str, ...], bool], ...], i: int, service: str = "hive"
    ) -> object:
        return PolicyFact(service, resources, frozenset({(f"pd_r{i}", "select")}))

    pool: list[object] = list(POOL)
    for i in range(12):
        db = ("D" if i % 2 else "d") + str(i % 4)
        pool.append(
            hive((("column", ("*",), False), ("database", (db,), False), ("table", (f"t{i}",), False)), i)
        )
        pool.append(hive((("database", (db, "d9"), False),), i))  # two databases: by hand
        pool.append(hive((("database", ("d*",), False),), i))  # a wildcard: by hand
        pool.append(hive((("database", (db,), False),), i, "other"))  # another service
    rng = random.Random(32)
    apart = factsets.Apart(lambda fact: covered_database(fact, "hive"))

    def some(k: int) -> frozenset[object]:
        return frozenset(rng.sample(pool, k))

    kept = some(30)
    desired: frozenset[object] = factsets.joined(kept, some(8))  # type: ignore[arg-type]
    held = some(40)
    moved = 0
    for _ in range(2000):
        kind = rng.random()
        if kind < 0.4:
            if rng.random() < 0.1:
                kept = kept ^ some(3)
            own = some(rng.randrange(0, 12))
            desired = factsets.joined(kept, own) if rng.random() < 0.9 else kept | own  # type: ignore[arg-type]
        elif kind < 0.8:
            base = held if rng.random() < 0.9 else some(40)
            gone = frozenset(rng.sample(sorted(base, key=str), min(4, len(base))))
            added = some(4) - (base - gone)
            held = factsets.moved((base - gone) | added, base, gone, added)  # type: ignore[arg-type]
        before = apart.visited
        if rng.random() < 0.2:
            assert apart(desired, held) == (desired - held, held - desired)
            continue
        focus = frozenset(rng.sample(["d0", "d1", "d2", "d3", "d9", "x"], rng.randrange(0, 3)))
        covers = Covers(focus, "hive")
        want, have = apart(desired, held, focus)
        assert want == {f for f in desired - held if covers(f)}  # type: ignore[arg-type]
        assert have == {f for f in held - desired if covers(f)}  # type: ignore[arg-type]
        moved += apart.visited - before < len(desired) + len(held)
    assert moved > 500  # the last answer was moved, not only made again


def test_sets_of_parts_hold_what_the_frozen_sets_they_stand_for_hold() -> None:
    """A :class:`factsets.Spread` moved again and again, and a :class:`factsets.Joined`, hold
    exactly the frozen set each stands for (membership of every fact, size, iteration,
    equality, the set operators, taken whole); the set a move was made from is left as it was
    (a reader holding it sees no change)."""
    rng = random.Random(28)
    model: frozenset[object] = _some(rng, 25)
    spread = factsets.Spread.of(model)  # type: ignore[arg-type]
    history = [(spread, model)]
    for _ in range(500):
        gone = frozenset(rng.sample(sorted(model, key=str), rng.randint(0, min(3, len(model)))))
        added = _some(rng, rng.randint(0, 3))
        spread = spread.moved(gone, added)  # type: ignore[arg-type]
        model = (model - gone) | added
        history.append((spread, model))
        kept = _some(rng, 15)
        own = _some(rng, 6)
        joined = factsets.joined(kept, own)  # type: ignore[arg-type]
        for made, want in ((spread, model), (joined, kept | own)):
            assert len(made) == len(want) and made == want and want == made
            assert sorted(made, key=str) == sorted(want, key=str)
            assert all((fact in made) == (fact in want) for fact in POOL)
            assert made.whole() == want and made - own == want - own and made | own == want | own
    for made, want in history:  # each set made before is as it was
        assert made == want and all((fact in made) == (fact in want) for fact in POOL)


def test_sets_of_parts_answer_every_set_operation_as_their_frozen_sets_over_random_sets() -> None:
    """Each operation a caller may use (hashing, ``==``/``<=``/``<`` and the operators
    ``- | & ^`` from either side, ``isdisjoint``, a frozen set's methods given one, a dict
    key) answers for a :class:`factsets.Spread` (made, moved) and a :class:`factsets.Joined`
    as for the frozen set it stands for, against random frozen sets."""
    rng = random.Random(29)
    for _ in range(300):
        kept, own, other = _some(rng, rng.randint(0, 30)), _some(rng, rng.randint(0, 10)), _some(rng, 20)
        gone, added = _some(rng, 4), _some(rng, 4)
        spread = factsets.Spread.of(rng.choice([kept | own, list(kept) + list(own)]))  # type: ignore[arg-type]
        cases = [
            (factsets.joined(kept, own), kept | own),  # type: ignore[arg-type]
            (spread, kept | own),
            (spread.moved(gone, added), ((kept | own) - gone) | added),  # type: ignore[arg-type]
        ]
        for made, want in cases:
            assert hash(made) == hash(want) and {want: 1}[made] == 1 and {made: 1}[want] == 1  # type: ignore[index]
            assert made == want and want == made and not made != want and not want != made
            assert (made == other) == (want == other) and (other == made) == (want == other)
            for op in (
                lambda a, b: a - b,
                lambda a, b: a | b,
                lambda a, b: a & b,
                lambda a, b: a ^ b,
                lambda a, b: a <= b,
                lambda a, b: a < b,
                lambda a, b: a >= b,
                lambda a, b: a.isdisjoint(b),
            ):
                assert op(made, other) == op(want, other) and op(other, made) == op(other, want)
            assert other.union(made) == other | want and other.issubset(made) == (other <= want)
            assert frozenset().union(made) == want and type(factsets.whole(made)) is frozenset


def test_a_spread_set_unpickled_under_other_hashes_holds_its_facts(tmp_path: object) -> None:
    """A :class:`factsets.Spread` pickled in one process and loaded in another (other string
    hashes: its facts in other slots) holds every fact it held, found by ``in``."""
    import subprocess
    import sys
    from pathlib import Path

    out = Path(str(tmp_path)) / "spread.pickle"
    make = (
        "import pickle, sys; from pushdown_ranger import factsets; "
        "from pushdown_ranger.tests.test_ranger_factsets import POOL; "
        f"open({str(out)!r}, 'wb').write(pickle.dumps(factsets.Spread.of(frozenset(POOL))))"
    )
    check = (
        "import pickle; from pushdown_ranger.tests.test_ranger_factsets import POOL; "
        f"s = pickle.loads(open({str(out)!r}, 'rb').read()); "
        "assert len(s) == len(POOL) and all(f in s for f in POOL), sum(f in s for f in POOL)"
    )
    for seed, code in (("1", make), ("2", check)):
        env = {**__import__("os").environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]


class _Twin:
    """A fact whose hash it shares with many others (one :class:`factsets.Spread` slot)."""

    def __init__(self, name: str, hashed: int) -> None:
        self.name, self.hashed = name, hashed

    def __hash__(self) -> int:
        return self.hashed

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Twin) and other.name == self.name

    def __reduce__(self) -> tuple[object, ...]:
        return _Twin, (self.name, self.hashed)


def test_kept_sets_moved_with_colliding_hashes_and_copies_answer_as_the_set_differences() -> None:
    """Kept sets spread over facts sharing a few hashes (many facts in one slot, equal
    hashes apart), moved with a fact that leaves and joins in one step, one gone that was
    never there, and one added twice; a spread set copied or pickled (another object: no
    step is remembered for it): every pair of sets joined from them, the kept roles' steps
    used, answers as the set differences."""
    import copy
    import pickle

    rng = random.Random(32)
    pool = [_Twin(f"f{i}", rng.choice((0, 1, 64, 4096, -1))) for i in range(60)]
    kept: factsets.Spread = factsets.Spread.of(frozenset(pool[:30]))
    made = [factsets.joined(kept, frozenset(rng.sample(pool, 3)))]  # type: ignore[arg-type]
    for _ in range(300):
        both = rng.choice(pool)
        gone = frozenset([*rng.sample(pool, 2), both])
        added = frozenset([*rng.sample(pool, 2), both])
        moved = kept.moved(gone, added)
        assert moved.whole() == (kept.whole() - gone) | added
        kept = factsets.kept_moved(moved, kept, gone, added)
        if rng.random() < 0.1:
            kept = copy.copy(kept) if rng.random() < 0.5 else pickle.loads(pickle.dumps(kept))
        made.append(factsets.joined(kept, frozenset(rng.sample(pool, 3))))  # type: ignore[arg-type]
        for old in made[-6:-1]:
            for a, b in ((old, made[-1]), (made[-1], old)):
                wa, wb = frozenset(a), frozenset(b)
                assert factsets.differ(a, b) == (wa - wb, wb - wa)
