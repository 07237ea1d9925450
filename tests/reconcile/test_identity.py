"""Model names and the server names they map to, over the whole model."""

from __future__ import annotations

from pushdown.reconcile.identity import Identity, map_one


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
