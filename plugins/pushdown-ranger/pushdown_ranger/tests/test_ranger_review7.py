"""Hostile review of the narrowing policy's spare resource forms and of the policies'
choice of Ranger roles kept between compiles: histories after which Ranger (its own engine,
the stand-in held equal to it) allows more than the stored model."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from pushdown_lab.ranger_ground_truth import judged
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import BackendError
from pushdown.model import changes as ch
from pushdown.model.securables import ObjectRef
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.companion import NARROWS, narrows, spare_form
from tests.costs import do

from .test_ranger_null_narrow import EVERY_TABLE, NULL_DENY, _allowed, _narrowings, _unwritable
from .test_ranger_review import hand_policy, revoke_all, world
from .world import backend_for

pytestmark = pytest.mark.ranger
ALL = Scope.everything()


def _bob_selects(standin: Standin, column: str) -> bool:
    """Ranger 2.9's engine's answer: bob selects ``column`` of crm.leads."""
    resource = {"database": "crm", "table": "leads", "column": column}
    (answer,) = judged(standin, [("hive", resource, "select", "bob", [])])
    return answer.allowed


@pytest.mark.parametrize(
    ("excluded", "missed"),
    [("1", "10"), ("ß", "ss")],
    ids=["star-appended", "case-twin-not-one-name"],
)
def test_a_spare_form_never_matches_fewer_resources_than_the_policy_it_narrows(
    ranger_standin: Standin, excluded: str, missed: str
) -> None:
    """Somebody with Ranger admin puts pushdown's role pd_reader in an override-priority policy
    on every column of crm's tables but ``excluded`` (isExcludes), spelling the database both
    ways, and gives it a null deny (unwritable). The model then revokes reader: pushdown's
    narrowing policy beside it needs another signature, so it goes on the spare form of its
    resources, which adds a value to the excluded columns (``1*`` after ``1``; ``SS`` after
    ``ß``, which Ranger's case-insensitive matcher does not take for one name). The narrowing
    policy then excludes column ``missed`` too, where the unwritable policy still allows
    pd_reader: bob selects it, though the model allows him nothing."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    resources = {
        "database": {"values": ["crm", "CRM"]},
        "table": {"values": ["?*"]},
        "column": {"values": [excluded], "isExcludes": True},
    }
    store = ranger_standin.store
    hand = store.create_policy(
        {
            "service": "hive",
            "name": "hand excludes",
            "resources": resources,
            "policyPriority": 1,
            "policyItems": [{"roles": ["pd_reader"], "accesses": [{"type": "select", "isAllowed": True}]}],
        }
    )
    store.update_policy(
        hand["id"], {**store.policy(hand["id"]), "denyPolicyItems": [NULL_DENY]}, checked=False
    )
    assert _bob_selects(ranger_standin, missed)
    revoke_all(b)
    with contextlib.suppress(BackendError):  # reported; what counts is what Ranger decides
        reconcile(backend, b.model, ALL)
    (narrowing,) = _narrowings(ranger_standin)
    assert narrowing["resources"]["column"]["values"] == spare_form(resources)[0]["column"]["values"]
    assert not _bob_selects(ranger_standin, "c")  # the columns both match are denied
    assert not _bob_selects(ranger_standin, missed)  # WIDER: the narrowing policy misses it


def test_a_narrowing_policy_excluding_more_is_never_read_as_the_narrowing(ranger_standin: Standin) -> None:
    """An unwritable policy (a null deny) allows pushdown's role pd_reader every column of crm's
    tables but ``1`` (isExcludes). Somebody with Ranger admin puts beside it a policy shaped as
    pushdown's narrowing policy (both labels, override priority, a plain deny for pd_reader)
    that excludes column ``5`` too. The model revokes reader: the read takes that policy for
    the narrowing of the unwritable one (its key less the value ``5``), so the unwritable
    policy's allow is read as taken away, and the sync settles; but Ranger still lets bob
    select column ``5``, which the model allows him nowhere."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    on = {"database": {"values": ["crm"]}, "table": {"values": ["?*"]}}
    allow = [{"roles": ["pd_reader"], "accesses": [{"type": "select", "isAllowed": True}]}]
    store = ranger_standin.store
    hand = store.create_policy(
        {
            "service": "hive",
            "name": "hand excludes",
            "resources": {**on, "column": {"values": ["1"], "isExcludes": True}},
            "policyItems": allow,
        }
    )
    store.update_policy(
        hand["id"], {**store.policy(hand["id"]), "denyPolicyItems": [NULL_DENY]}, checked=False
    )
    deny = [{"roles": ["pd_reader"], "accesses": [{"type": "select", "isAllowed": True}]}]
    store.create_policy(
        {
            "service": "hive",
            "name": "looks like a narrowing",
            "resources": {**on, "column": {"values": ["1", "5"], "isExcludes": True}},
            "policyPriority": 1,
            "policyLabels": ["pushdown", "pushdown-narrowing"],
            "denyPolicyItems": deny,
        }
    )
    revoke_all(b)
    with contextlib.suppress(BackendError):  # reported; what counts is what Ranger decides
        reconcile(backend, b.model, ALL)
    plan, _ = reconcile(backend, b.model, ALL)
    assert plan.empty, plan.ops  # settled: nothing more is written
    assert not _bob_selects(ranger_standin, "c")
    assert not _bob_selects(ranger_standin, "5")  # WIDER: read as narrowed, never written


def test_a_second_unwritable_policy_on_the_spare_form_never_takes_the_narrowing(
    ranger_standin: Standin,
) -> None:
    """The unwritable policy (override priority, a null deny) is narrowed on its second spare
    form, the first held by a hand-made override policy allowing zed. Somebody then puts
    pd_reader's update in that hand-made policy and a null deny (unwritable too): the narrowing
    policy on ``*, **, ***`` is the spare form of both. Whatever the read takes it for, bob
    never selects or updates crm's tables, and the syncs settle."""
    b, backend, _ = _unwritable(ranger_standin, override=True)
    store = ranger_standin.store
    spare = {**EVERY_TABLE, "column": {"values": ["*", "**"]}}
    other = hand_policy(ranger_standin, spare, name="hand spare", policyPriority=1)
    revoke_all(b)
    with contextlib.suppress(BackendError):
        reconcile(backend, b.model, ALL)
    (first,) = _narrowings(ranger_standin)
    assert first["resources"]["column"]["values"] == ["*", "**", "***"]
    update = {"roles": ["pd_reader"], "accesses": [{"type": "update", "isAllowed": True}]}
    held = store.policy(other["id"])
    edit = {**held, "policyItems": [*held["policyItems"], update], "denyPolicyItems": [NULL_DENY]}
    store.update_policy(other["id"], edit, checked=False)
    assert _allowed(ranger_standin, ("bob", "update")) == [True]  # wider until the sync
    for _ in range(3):
        with contextlib.suppress(BackendError):
            reconcile(backend, b.model, ALL)
        assert _allowed(ranger_standin, ("bob", "select"), ("bob", "update")) == [False, False]
    plan, _ = reconcile(backend, b.model, ALL)
    assert plan.empty, plan.ops


@pytest.mark.parametrize(
    ("forged", "missed"),
    [
        ({"table": {"values": ["nosuch"]}, "column": {"values": ["*"]}}, "c"),
        ({"table": {"values": ["?*"]}, "column": {"values": ["5"], "isExcludes": True}}, "5"),
    ],
    ids=["another-table", "excluding-a-column"],
)
def test_a_forged_narrows_option_never_takes_the_narrowing(
    ranger_standin: Standin, forged: dict[str, Any], missed: str
) -> None:
    """An unwritable policy (a null deny) allows pushdown's role pd_reader every column of
    crm's tables. Somebody with Ranger admin puts beside it a policy shaped as pushdown's
    narrowing policy (both labels, override priority, a plain deny for pd_reader) on resources
    that do not cover it (another table; every column but ``5``), whose option names the
    unwritable policy as the one it narrows. The model revokes reader: the option alone never
    makes it that policy's narrowing, so the real narrowing is written, and bob never selects
    column ``missed`` of crm.leads."""
    b, backend, created = _unwritable(ranger_standin)
    deny = [{"roles": ["pd_reader"], "accesses": [{"type": "select", "isAllowed": True}]}]
    ranger_standin.store.create_policy(
        {
            "service": "hive",
            "name": "forged narrowing",
            "resources": {"database": {"values": ["crm"]}, **forged},
            "policyPriority": 1,
            "policyLabels": ["pushdown", "pushdown-narrowing"],
            "denyPolicyItems": deny,
            "options": {NARROWS: created["id"]},
        }
    )
    revoke_all(b)
    for _ in range(3):
        with contextlib.suppress(BackendError):  # reported; what counts is what Ranger decides
            reconcile(backend, b.model, ALL)
        assert not _bob_selects(ranger_standin, "c")
        assert not _bob_selects(ranger_standin, missed)  # WIDER if the option took the narrowing
    assert any(
        narrows(p) == created["id"] and p["name"] != "forged narrowing" for p in _narrowings(ranger_standin)
    )
    plan, _ = reconcile(backend, b.model, ALL)
    assert plan.empty, plan.ops


# -- the policies' choice of Ranger roles kept between compiles ---------------------------


def test_a_kept_choice_of_ranger_roles_follows_what_no_stamp_moves() -> None:
    """The choice kept for ``a`` and ``b`` (``pair``, ``desired._Memo.covers``) depends on more
    than their roles' holders: a role ``PAIR`` created with no holders (no stamp) makes ``pair``
    a case twin, refused, so the choice is per-user roles; deleted (no stamp), ``pair`` again;
    a user ``A`` (a case twin of ``a``) added and removed. After each, and after a one-table
    grant that keeps the choices, the compile equals one from scratch."""
    from .test_ranger_scoped_roles import Compiler, kept_choices, names_in_policies, whole

    model = kept_choices()
    compiler = Compiler(model)
    assert "pd_pair" in names_in_policies(compiler.full())
    table = ObjectRef.parse("table c.s.t")
    steps = [
        lambda: ch.create_role(model, "PAIR"),
        lambda: ch.grant_privileges(model, "wide", table, ["MODIFY_TABLE"]),
        lambda: ch.delete_role(model, "PAIR"),
        lambda: ch.revoke_privileges(model, "wide", table, ["MODIFY_TABLE"]),
        lambda: ch.add_user(model, "A"),
        lambda: ch.grant_privileges(model, "wide", table, ["MODIFY_TABLE"]),
        lambda: ch.remove_user(model, "A"),
        lambda: ch.revoke_privileges(model, "wide", table, ["MODIFY_TABLE"]),
    ]
    seen = set()
    for step in steps:
        events = step()
        do(model, events)
        scoped = compiler.scoped(events)
        assert scoped == whole(model), events
        seen.add("pd_pair" in names_in_policies(scoped))
    assert seen == {True, False}  # the choice moved, and moved back
