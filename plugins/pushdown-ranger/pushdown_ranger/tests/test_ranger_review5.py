"""Hostile review of the narrowing policy beside a policy Ranger refuses to write, the
import's inverted principal mapping and the case twin made again: sequences after which
Ranger (its own engine, the stand-in held equal to it) allowed more than the stored model,
a narrowing was held back, or pushdown never settled."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import BackendError, NotConverged
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.reconcile.estate import adopt
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.writer import Writer

from .test_ranger_case_twin_roles import agrees, scoped
from .test_ranger_histories import start
from .test_ranger_import_mapped import make_estate, store
from .test_ranger_null_narrow import EVERY_TABLE, WHO, _allowed, _narrowings, _unwritable, _validated
from .test_ranger_review import hand_policy, revoke_all, wider, world
from .world import backend_for

pytestmark = pytest.mark.ranger
ALL = Scope.everything()


def _narrowed(standin: Standin) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """reader's grants merged into a hand-made every-table policy on crm, which then gets a
    null deny (unwritable), and revoked: pushdown's narrowing policy stands beside it."""
    b, backend, created = _unwritable(standin)
    revoke_all(b)
    reconcile(backend, b.model, ALL)
    (narrowing,) = _narrowings(standin)
    assert _allowed(standin, *WHO) == [False, False, False, True]
    return b, created, narrowing


def test_a_deny_exception_added_to_the_narrowing_policy_is_never_wider(ranger_standin: Standin) -> None:
    """Somebody adds a deny exception for pushdown's role to the narrowing policy: Ranger
    excepts bob from its deny, so the unwritable policy's allow for pd_reader holds again.
    A narrowing policy with a deny exception is not in force: the next sync takes the
    exception out (that only narrows) and bob is denied again."""
    b, _, narrowing = _narrowed(ranger_standin)
    store = ranger_standin.store
    exception = {"roles": ["pd_reader"], "accesses": [{"type": "select"}, {"type": "update"}]}
    store.update_policy(narrowing["id"], {**narrowing, "denyExceptions": [exception]})
    assert _allowed(ranger_standin, ("bob", "select")) == [True]  # wider until the sync
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
    assert wider(ranger_standin, b) == []
    assert not store.policy(narrowing["id"]).get("denyExceptions")  # taken out: that only narrows
    again, _ = reconcile(backend, b.model, ALL)
    assert again.empty, again.ops


@pytest.mark.parametrize(
    ("principal", "said"),
    [
        ({"roles": ["pd_reader"]}, "pd_reader, outside pushdown"),
        ({"groups": ["etl"]}, "override priority makes its allow items beat deny items"),
    ],
    ids=["pushdowns-role", "host-group"],
)
def test_a_hand_made_policy_with_the_narrowing_label_is_read_as_hand_made(
    ranger_standin: Standin, principal: dict[str, Any], said: str
) -> None:
    """Somebody with Ranger admin makes an override-priority policy on crm.orders carrying
    pushdown's two labels, allowing select to pd_reader (or to the host's group etl, bob in
    it). It beats reader's DENY on orders (an override allow beats a normal-priority deny).
    Without the labels the allow is reported (a hand-made item naming pushdown's role; an
    override voiding the database's deny items: test_ranger_review). With them it is taken
    for pushdown's own narrowing policy: its allow items and priority never read, and it is
    reported as 'no longer needed: the sync removes it', which no sync does."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    resources = {
        "database": {"values": ["crm"]},
        "table": {"values": ["orders"]},
        "column": {"values": ["*"]},
    }
    item = [{**principal, "accesses": [{"type": "select", "isAllowed": True}]}]
    policy = hand_policy(
        ranger_standin,
        resources,
        policyPriority=1,
        policyItems=item,
        policyLabels=["pushdown", "pushdown-narrowing"],
    )
    reconcile(backend, b.model, ALL)
    plan, _ = reconcile(backend, b.model, ALL)
    named = [f for f in plan.findings if str(policy["name"]) in f and said in f]
    groups = lambda u: sorted(b.model.user_groups.get(u, ())) + (["etl"] if u == "bob" else [])  # noqa: E731
    assert wider(ranger_standin, b, groups_of=groups) == [] or named, plan.findings
    assert not any(str(policy["name"]) in f and "the sync removes it" in f for f in plan.findings)


@pytest.mark.parametrize(
    ("item", "said"),
    [
        ({"users": ["carol"], "accesses": [{"type": "select"}]}, "allows select to user carol, outside"),
        ({"roles": ["pd_reader"], "accesses": [{"type": "alter"}]}, "pd_reader, outside pushdown"),
    ],
    ids=["allow-user", "allow-pushdowns-role"],
)
def test_a_narrowing_policy_given_an_allow_item_is_read_as_hand_made(
    ranger_standin: Standin, item: dict[str, Any], said: str
) -> None:
    """A near miss: one allow item added by hand to pushdown's own narrowing policy (override
    priority: it beats the model's deny items). It is no longer what pushdown writes, so it is
    read as a hand-made policy: its allow item is reported, never taken for the narrowing. It
    still holds the narrowing's resource signature: the narrowing policy written again goes on
    the spare form of the resources in the same sync (never refused: 3010), which fails no write."""
    b, _, narrowing = _narrowed(ranger_standin)
    store = ranger_standin.store
    store.update_policy(narrowing["id"], {**narrowing, "policyItems": [item]})
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    assert len(_narrowings(ranger_standin)) == 2  # the hand-made one, and pushdown's on the spare form
    plan, _ = reconcile(backend, b.model, ALL, dry_run=True)
    named = [f for f in plan.findings if str(narrowing["name"]) in f and said in f]
    assert named, plan.findings
    assert not any(str(narrowing["name"]) in f and "the sync removes it" in f for f in plan.findings)
    assert _allowed(ranger_standin, ("bob", "select"), ("zed", "select")) == [False, True]


def test_a_deny_beside_the_unwritable_policys_allow_settles(ranger_standin: Standin) -> None:
    """The model denies reader select on all of crm (its every-table set) where the unwritable
    policy allows pd_reader select: the narrowing policy denies pd_reader select (Ranger:
    bob denied, right). The read folds that deny into 'allow not held' only (the policy
    allows the same pair), never into 'deny held', so the model's deny is never seen written:
    every sync rewrites nothing and fails its read-back ('1 to add'), for ever."""
    b, backend, _ = _unwritable(ranger_standin)
    b.deny("reader", "schema sales.crm", "SELECT_TABLE")
    with contextlib.suppress(NotConverged):  # the first sync may say so; the next must settle
        reconcile(backend, b.model, ALL)
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
    assert wider(ranger_standin, b) == []
    plan, _ = reconcile(backend, b.model, ALL)
    assert plan.empty, plan.ops


@pytest.mark.parametrize("name", ["bob\x00x", "b\nob"], ids=["nul", "newline"])
def test_a_member_name_no_model_user_may_hold_is_left_out_of_the_import(
    ranger_standin: Standin, name: str
) -> None:
    """A role member Ranger holds under a name the model refuses (a control
    character; the mapping's check lets a NUL through for the compile's own names): the
    import leaves that member out with the reason and imports the rest, never failing
    whole on one hostile name, never as another user."""
    backend = backend_for(ranger_standin)
    make_estate(ranger_standin, ["bob", name], ["alice"])
    adopted = adopt(backend.estate(store("bob", "alice")))
    assert adopted.model.users == {"bob", "alice"}, adopted.report
    assert set(adopted.model.holders_of("readers")) == {"bob"}
    assert any(repr(name) in r and "pd_readers" in r for r in adopted.report), adopted.report


@pytest.mark.parametrize("deny", [False, True], ids=["allow", "deny"])
def test_a_role_named_again_whose_ranger_role_could_not_go(ranger_standin: Standin, deny: bool) -> None:
    """A hand-made deny item with conditions names pd_r1 (kept whole: taking a principal
    out of a deny widens), so Ranger refuses to delete pd_r1 when R1 makes r1 unnameable
    (reported, left for a person). R1 deleted: r1 is named again, but its Ranger role is
    in the read, so the scoped sync never compiles s1, where its holders' per-user roles
    stood for it: they stay there, and pd_r1's own item is never written back (drift: the
    same decisions, but a full plan is not empty until s1 is compiled for another reason)."""
    backend = backend_for(ranger_standin)
    b = start()
    select = ["SELECT_TABLE"]
    setup = [
        *ch.grant_privileges(b.model, "r2", ObjectRef.parse("catalog c"), select, Condition.ALLOW),
        *ch.grant_role(b.model, "r1", Principal.user("u3")),
    ]
    if deny:
        setup += ch.grant_privileges(b.model, "r1", ObjectRef.parse("table c.s1.a"), select, Condition.DENY)
    for event in setup:
        b.model.apply(event)
    if deny:
        for event in ch.revoke_privileges(
            b.model, "r1", ObjectRef.parse("schema c.s1"), select, Condition.ALLOW
        ):
            b.model.apply(event)
    reconcile(backend, b.model, ALL)
    zz = {"database": {"values": ["zz"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}}
    kept = {
        "roles": ["pd_r1"],
        "accesses": [{"type": "drop"}],
        "conditions": [{"type": "ip-range", "values": ["10.0.0.0/8"]}],
    }
    ranger_standin.store.create_policy(
        {"service": "hive", "name": "hand zz", "resources": zz, "denyPolicyItems": [kept]}
    )
    reconcile(backend, b.model, ALL)
    with pytest.raises(BackendError, match="pd_r1"):
        scoped(backend, b, ch.create_role(b.model, "R1"))
    scoped(backend, b, ch.delete_role(b.model, "R1"))
    agrees(ranger_standin, backend, b)


def test_an_unwritable_policy_with_override_priority_is_still_narrowed(ranger_standin: Standin) -> None:
    """The policy pushdown merged reader's allow into is given override priority and a null
    deny by hand (behind the validator). The model revokes reader: the rewrite is refused
    (3053), and the narrowing policy beside it, override priority on the same resources, would
    have the same resource signature (3010): it goes on their spare form instead, so bob and
    alice lose select on crm (never wider than the model; the refused rewrite reported)."""
    b, backend, _ = _unwritable(ranger_standin, override=True)
    revoke_all(b)
    with contextlib.suppress(BackendError):  # reported; what counts is what Ranger decides
        reconcile(backend, b.model, ALL)
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
    assert wider(ranger_standin, b) == []


def _no_known_signatures(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer knows no policy at a signature beforehand (one made between the read and the
    write, say): only Ranger's refusal (3010) tells it."""
    monkeypatch.setattr(Writer, "_held_signatures", lambda self: set())


@pytest.mark.parametrize("known", [True, False], ids=["read", "refused"])
def test_a_near_miss_narrowing_policy_never_holds_back_the_narrowing(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch, known: bool
) -> None:
    """pushdown's narrowing policy is edited by hand into an allow for carol (its deny items
    gone): read as hand-made, it still holds the narrowing's resource signature (override
    priority on those resources). The narrowing policy pushdown writes again goes on the
    spare form of the resources (read so; or refused with 3010 and written there in the same
    sync): bob is denied by Ranger's engine, carol's hand-made allow is reported, the sync
    settles and the new policy is read as the narrowing of the unwritable policy."""
    b, created, narrowing = _narrowed(ranger_standin)
    store = ranger_standin.store
    allow = [{"users": ["carol"], "accesses": [{"type": "select"}]}]
    store.update_policy(narrowing["id"], {**narrowing, "policyItems": allow, "denyPolicyItems": []})
    assert _allowed(ranger_standin, ("bob", "select")) == [True]  # wider until the sync
    if not known:
        _no_known_signatures(monkeypatch)
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
    assert {w[0] for w in wider(ranger_standin, b)} == {"carol"}  # the hand-made allow only: reported
    (new,) = [p for p in _narrowings(ranger_standin) if p["id"] != narrowing["id"]]
    assert new["resources"]["column"]["values"] == ["*", "**"] and not new.get("policyItems")
    monkeypatch.undo()
    plan, _ = reconcile(backend, b.model, ALL)
    assert plan.empty, plan.ops
    named = [f for f in plan.findings if str(narrowing["name"]) in f and "carol" in f]
    assert named, plan.findings
    assert any(str(new["name"]) in f and str(created["name"]) in f for f in plan.findings)
    assert not any("no longer needed" in f for f in plan.findings), plan.findings


@pytest.mark.parametrize("known", [True, False], ids=["read", "refused"])
def test_a_hand_made_override_policy_on_the_narrowings_resources_never_holds_it_back(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch, known: bool
) -> None:
    """Somebody made an override-priority policy on exactly the resources of the unwritable
    policy (allowing carol select): the narrowing policy there would have its resource
    signature (3010). It goes on their spare form: bob is denied by Ranger's engine, carol's
    hand-made allow is reported, and the sync settles."""
    b, backend, created = _unwritable(ranger_standin)
    allow = [{"users": ["carol"], "accesses": [{"type": "select"}]}]
    hand = hand_policy(ranger_standin, EVERY_TABLE, name="hand override", policyPriority=1, policyItems=allow)
    revoke_all(b)
    if not known:
        _no_known_signatures(monkeypatch)
    reconcile(backend, b.model, ALL)
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
    assert {w[0] for w in wider(ranger_standin, b)} == {"carol"}  # the hand-made allow only: reported
    (narrowing,) = _narrowings(ranger_standin)
    assert narrowing["resources"]["column"]["values"] == ["*", "**"]
    monkeypatch.undo()
    plan, _ = reconcile(backend, b.model, ALL)
    assert plan.empty, plan.ops
    assert any("hand override" in f and "carol" in f for f in plan.findings), plan.findings
    assert any(str(narrowing["name"]) in f and str(created["name"]) in f for f in plan.findings)
    assert hand["id"] in {p["id"] for p in ranger_standin.store.list_policies({"serviceName": "hive"})}


def test_an_override_policys_near_miss_narrowing_policy_never_holds_it_back(
    ranger_standin: Standin, ranger_judge: Any
) -> None:
    """The unwritable policy has override priority: its narrowing policy is on the spare form of
    its resources, and is edited by hand into an allow for carol (read as hand-made, on that
    signature). The narrowing policy written again goes on the next spare form (one more ``*``:
    the same resources, a third signature, which Ranger 2.9's validator accepts beside both):
    bob is denied by Ranger's engine, and the new policy is read as the narrowing of the
    unwritable policy, never of the hand-made one (whose spare form it also is)."""
    b, backend, created = _unwritable(ranger_standin, override=True)
    store = ranger_standin.store
    revoke_all(b)
    reconcile(backend, b.model, ALL)
    (first,) = _narrowings(ranger_standin)
    allow = [{"users": ["carol"], "accesses": [{"type": "select"}]}]
    store.update_policy(first["id"], {**first, "policyItems": allow, "denyPolicyItems": []})
    assert _allowed(ranger_standin, ("bob", "select")) == [True]  # wider until the sync
    reconcile(backend, b.model, ALL)
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
    assert {w[0] for w in wider(ranger_standin, b)} == {"carol"}  # the hand-made allow only: reported
    (new,) = [p for p in _narrowings(ranger_standin) if p["id"] != first["id"]]
    assert new["resources"]["column"]["values"] == ["*", "**", "***"]
    held = [store.policy(created["id"]), store.policy(first["id"])]
    assert _validated(ranger_judge, new, held) is None
    plan, _ = reconcile(backend, b.model, ALL)
    assert plan.empty, plan.ops
    assert any(str(new["name"]) in f and str(created["name"]) in f for f in plan.findings), plan.findings
    assert any(str(first["name"]) in f and "carol" in f for f in plan.findings), plan.findings
    assert not any("no longer needed" in f for f in plan.findings), plan.findings
