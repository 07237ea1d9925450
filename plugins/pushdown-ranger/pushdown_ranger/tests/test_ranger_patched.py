"""The read-back's mappings (:func:`pushdown_ranger.answers.patched`): a sync's answers put
over the read's policies or roles without a copy of every one, read exactly as the dict a
copy with them put in would be (keys, order, values, length), whatever the answers: keys
replaced, added, deleted (of the read or added since), added again, over many syncs; the
read's own mapping and every earlier one never changed."""

from __future__ import annotations

import pickle
import random
from typing import Any

import pytest

from pushdown_ranger import answers
from pushdown_ranger.answers import Patched, Written, patched


def _as_copied(before: dict[str, Any], written: dict[str, Any]) -> dict[str, Any]:
    """What the read-back did before: a copy of every key, the answers put in place."""
    out = dict(before)
    for key, answer in written.items():
        if answer is None:
            out.pop(key, None)
        else:
            out[key] = answer
    return out


def _same(got: Any, want: dict[str, Any]) -> None:
    assert list(got) == list(want)
    assert list(got.items()) == list(want.items())
    assert len(got) == len(want)
    for key in [*want, "nobody", "r-missing"]:
        assert (key in got) == (key in want), key
        assert got.get(key) == want.get(key), key
        if key in want:
            assert got[key] is want[key], key
        else:
            with pytest.raises(KeyError):
                got[key]


@pytest.mark.parametrize("seed", range(40))
def test_the_answers_put_over_a_read_read_as_a_copy_with_them_put_in(seed: int) -> None:
    rng = random.Random(seed)
    read = {f"r{i}": {"name": f"r{i}", "v": 0} for i in range(rng.choice([0, 1, 5, 40, 300]))}
    frozen = dict(read)
    now: Any = read
    want = dict(read)
    earlier: list[tuple[Any, dict[str, Any]]] = []
    for step in range(rng.randint(1, 60)):
        written: dict[str, Any] = {}
        for _ in range(rng.choice([0, 1, 1, 2, 3, 30])):
            pool = [*want, *(f"r{i}" for i in range(400, 420))]
            key = rng.choice(pool)
            roll = rng.random()
            written[key] = None if roll < 0.15 else {"name": key, "v": step + 1}
        now = patched(now, written)
        want = _as_copied(want, written)
        _same(now, want)
        earlier.append((now, dict(want)))
    assert read == frozen  # the read's own mapping never changed in place
    for mapping, then in earlier:  # nor any earlier one
        _same(mapping, then)
    assert pickle.loads(pickle.dumps(now)) == want


def test_a_grant_or_a_membership_copies_the_answers_since_the_read_not_every_key() -> None:
    """Counted: the keys copied to put one answer over reads of 100 and 1,000 roles are as
    many (before: 101 and 1,001, a copy of every role each read-back)."""
    counts = []
    for size in (100, 1000):
        read = {f"r{i}": {"name": f"r{i}"} for i in range(size)}
        before = answers.copied
        written = Written()
        written.role("r1", {"name": "r1", "users": [{"name": "newcomer"}]})
        after = written.patched_roles(read)
        assert isinstance(after, Patched) and after["r1"]["users"] and len(after) == size
        counts.append(answers.copied - before)
    assert counts == [1, 1], counts
    # nothing written: the read itself, no copy
    assert Written().patched_policies(read) is read  # type: ignore[comparison-overlap]


def test_the_answers_are_folded_into_one_mapping_again_before_they_grow_with_the_estate() -> None:
    """A read-back's copy of the answers since the read is bounded (:data:`FOLD_AT`): past it
    they are folded into one dict, and the next answers are put over that."""
    read = {f"r{i}": {"name": f"r{i}"} for i in range(4 * answers.FOLD_AT)}
    now: Any = read
    for i in range(answers.FOLD_AT + 5):
        now = patched(now, {f"new{i}": {"name": f"new{i}"}})
        assert not isinstance(now, Patched) or len(now._over) < answers.FOLD_AT
    assert len(now) == len(read) + answers.FOLD_AT + 5
    # a key of the read deleted: a plain copy (its place in the order moves when made again)
    gone = patched(patched(read, {"r7": {"name": "r7", "v": 1}}), {"r3": None})
    assert type(gone) is dict and "r3" not in gone and gone["r7"] == {"name": "r7", "v": 1}
    assert list(patched(gone, {"r3": {"name": "r3"}}))[-1] == "r3"
