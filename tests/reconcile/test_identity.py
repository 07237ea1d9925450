"""Model names and the server names they map to, over the whole model."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from pushdown.reconcile.identity import Identity, KeptIdentity, map_one


def boom(user: str) -> str:
    if user == "bad":
        raise RuntimeError("directory down")
    return {"Bob": "bob", "blank": " x", "nul": "a\x00b", "twin": "BOB"}.get(user, user)


def test_a_mapping_that_raises_or_gives_an_unusable_name_refuses_that_user_only() -> None:
    who = Identity.of(["alice", "bad", "blank", "nul"], boom)
    assert who.names == {"alice": "alice"}
    assert set(who.refused) == {"bad", "blank", "nul"} and "directory down" in who.refused["bad"]
    assert who.withheld == {"bad", "blank", "nul"}


def test_names_several_users_share_are_found_over_every_user() -> None:
    who = Identity.of(["Bob", "bob", "alice"], boom)
    assert who.clashes() == {"bob": frozenset({"Bob", "bob"})} and who.withheld == {"Bob", "bob"}


def test_without_case_names_equal_once_folded_clash_too() -> None:
    assert Identity.of(["bob", "twin"], boom).clashes() == {}
    caseless = Identity.of(["bob", "twin"], boom, caseless=True)
    assert caseless.clashes() == {"bob": frozenset({"bob", "twin"}), "BOB": frozenset({"bob", "twin"})}


def test_a_name_no_longer_in_the_model_is_mapped_again_and_its_server_name_is_an_orphan() -> None:
    who = Identity.of(["alice"], boom)
    assert who.name("Bob") == "bob" and who.orphan("bob") and not who.orphan("alice")
    assert who.names_of(["alice", "Bob", "bad"]) == {"alice", "bob"}


def test_a_backend_says_which_names_it_cannot_use() -> None:
    def starred(name: str) -> str | None:
        return "a wildcard" if "*" in name else None

    assert map_one(lambda u: u + "*", "a", starred) == (
        None,
        "pushdown_map_principal gave 'a' the unusable name 'a*' (a wildcard)",
    )
    assert Identity.of(["a"], lambda u: 7, unusable=starred).refused  # type: ignore[arg-type,return-value]


# -- the identity kept between syncs -------------------------------------------------------


def _mapper(table: dict[str, str]) -> tuple[Callable[[str], str], list[str]]:
    asked: list[str] = []

    def mapper(user: str) -> str:
        asked.append(user)
        return table.get(user, user.lower())

    return mapper, asked


def _same(kept: Identity, whole: Identity) -> None:
    assert dict(kept.names) == dict(whole.names)
    assert dict(kept.refused) == dict(whole.refused)
    assert dict(kept.users) == dict(whole.users)
    assert kept.clashes() == whole.clashes()
    assert kept.withheld == whole.withheld


@pytest.mark.parametrize("caseless", [False, True])
def test_a_kept_identity_equals_the_whole_model_one_after_every_change(caseless: bool) -> None:
    rng = random.Random(30 + caseless)
    pool = ["ann", "Ann", "bob", "BOB", "carl", " x", "", "dan", "Dan", "eve"]
    table = {"dan": "ann", "eve": "Ann"}
    mapper, _ = _mapper(table)
    kept = KeptIdentity(mapper, caseless=caseless)
    users: set[str] = set()
    for _ in range(300):
        users ^= {rng.choice(pool)}
        fresh = set(rng.sample(sorted(users), min(len(users), 2)))
        _same(kept.of(users, fresh), Identity.of(users, mapper, caseless=caseless))


def test_a_kept_identity_maps_only_the_users_that_changed() -> None:
    for n in (1_000, 10_000):  # two estates 10x apart: the same change, the same count
        mapper, asked = _mapper({})
        kept = KeptIdentity(mapper, stable=lambda: True)  # no hook: nothing changes underneath
        users = {f"u{i}" for i in range(n)}
        kept.of(users, None)  # the first (a full sync) maps everyone
        asked.clear()
        users.add("new")
        identity = kept.of(users, {"u1", "new"})  # one user added, a sync granting to two
        assert identity.name("new") == "new"
        assert sorted(asked) == ["new", "u1"]


def test_a_mapping_changed_underneath_is_caught_before_a_grant() -> None:
    table: dict[str, str] = {}
    mapper, _ = _mapper(table)
    kept = KeptIdentity(mapper)
    users = {"ann", "bob", "carl"}
    assert kept.of(users, None).clashes() == {}
    table["ann"] = "bob"  # the hook now maps ann to bob's account, and nobody said so
    identity = kept.of(users, {"ann"})  # a sync about to grant to ann
    assert identity.clashes() == {"bob": frozenset({"ann", "bob"})}
    assert identity.withheld == {"ann", "bob"}


def test_a_kept_identity_is_thrown_away_when_the_hooks_change() -> None:
    table: dict[str, str] = {}
    version = [1]
    mapper, _ = _mapper(table)
    kept = KeptIdentity(mapper, version=lambda: version[0])
    users = {"ann", "bob", "carl"}
    kept.of(users, None)
    table["carl"] = "bob"  # a plugin registered that maps carl elsewhere
    version[0] = 2
    assert kept.of(users, {"ann"}).clashes() == {"bob": frozenset({"bob", "carl"})}


@pytest.mark.parametrize("caseless", [False, True])
def test_a_kept_identity_given_the_roster_equals_the_whole_model_one_after_every_change(
    caseless: bool,
) -> None:
    """With ``roster`` (the object the users are of, its count of additions and removals):
    random histories where the count moves with each change, and now and then another
    object of the same count (a copy) holds other users: each answer is the whole model's."""
    rng = random.Random(40 + caseless)
    pool = ["ann", "Ann", "bob", "BOB", "carl", " x", "", "dan", "Dan", "eve"]
    mapper, _ = _mapper({"dan": "ann", "eve": "Ann"})
    kept = KeptIdentity(mapper, caseless=caseless, stable=lambda: True)
    owner, count, users = object(), 0, set()
    taken = 0
    for _ in range(300):
        if rng.random() < 0.1:  # another object at the same count, holding other users
            owner, users = object(), set(rng.sample(pool, 4))
        elif rng.random() < 0.6:
            users ^= {rng.choice(pool)}
            count += 1
        else:
            taken += 1  # nothing added or removed: the users are taken as kept
        fresh = set(rng.sample(sorted(users), min(len(users), 2)))
        identity = kept.of(users, fresh, roster=(owner, count))
        _same(identity, Identity.of(users, mapper, caseless=caseless))
    assert taken > 50


def test_a_kept_identity_trusts_the_roster_of_the_same_object_only() -> None:
    """The users are taken as kept only while the roster is the very object last given, at
    the same count: another object (a copy, a view) at the same count is compared, and a
    clash there is seen; the same object at the same count maps nobody but ``fresh``."""
    mapper, asked = _mapper({"carl": "bob"})
    kept = KeptIdentity(mapper, stable=lambda: True)
    model, copy = object(), object()
    assert kept.of({"ann", "bob"}, None, roster=(model, 1)).clashes() == {}
    asked.clear()
    assert kept.of({"ann", "bob"}, {"ann"}, roster=(model, 1)).clashes() == {}
    assert asked == ["ann"]
    identity = kept.of({"ann", "bob", "carl"}, {"ann"}, roster=(copy, 1))
    assert identity.clashes() == {"bob": frozenset({"bob", "carl"})}
    identity = kept.of({"ann", "bob"}, {"ann"}, roster=(model, 2))
    assert identity.clashes() == {}


def test_a_mapping_changed_underneath_is_caught_before_a_grant_whatever_the_roster() -> None:
    table: dict[str, str] = {}
    mapper, _ = _mapper(table)
    kept = KeptIdentity(mapper)
    users, model = {"ann", "bob", "carl"}, object()
    assert kept.of(users, None, roster=(model, 3)).clashes() == {}
    table["ann"] = "bob"  # the hook now maps ann to bob's account, and nobody said so
    identity = kept.of(users, {"ann"}, roster=(model, 3))  # nobody added or removed
    assert identity.clashes() == {"bob": frozenset({"ann", "bob"})}
    assert identity.withheld == {"ann", "bob"}
