"""Roles one Ranger name but for case, made and unmade by scoped syncs.

Role ``R1`` created beside ``r1``: the two are one Ranger name, so ``r1`` is refused and
its holders are named by their per-user roles (the databases whose items name ``pd_r1``
compiled in that sync). ``R1`` deleted again: ``r1`` is Ranger's to name once more, and
the scoped sync of the deletion brings ``pd_r1`` back where its holders' per-user roles
stood, not a later full sync. After every sync Ranger's own engine (the stand-in held
equal to it) decides as the model, and a plan from scratch is empty."""

from __future__ import annotations

import pytest
from pushdown_lab.ranger_standin import Standin

from pushdown.model import changes as ch
from pushdown.model.events import Event
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.scope import scope_of as event_scope
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.compiling import Compiling, ReadIndex
from tests.builders import Builder

from .probe import probe
from .test_ranger_histories import start
from .world import backend_for

pytestmark = pytest.mark.ranger
ALL = Scope.everything()


def scoped(backend: object, b: Builder, events: list[Event]) -> None:
    scope = Scope.nothing()
    for event in events:
        b.model.apply(event)
        scope = scope | event_scope(event)
    reconcile(backend, b.model, scope)  # type: ignore[arg-type]


def agrees(standin: Standin, backend: object, b: Builder) -> None:
    found = probe(standin, b.model, "c", ("u1", "u2", "u3"))
    assert found.wider == [] and found.narrower == [], (found.wider, found.narrower)
    left = planner.plan(backend, b.model, ALL)  # type: ignore[arg-type]
    assert left.empty, [f"{op.action} {op.fact}" for op in left.ops]


@pytest.mark.parametrize("held", [False, True], ids=["unheld", "held"])
@pytest.mark.parametrize("fresh", [False, True], ids=["same-backend", "fresh-backend"])
@pytest.mark.parametrize("deny", [False, True], ids=["allow", "deny"])
def test_a_role_s_twin_deleted_brings_the_role_back_in_the_scoped_sync(
    ranger_standin: Standin, deny: bool, fresh: bool, held: bool
) -> None:
    """``fresh``: the deletion is synced by a backend that never saw ``r1`` refused (another
    process): what Ranger holds says the role must come back."""
    backend = backend_for(ranger_standin)
    b = start()
    select = ["SELECT_TABLE"]
    setup = [
        *ch.grant_privileges(b.model, "r2", ObjectRef.parse("catalog c"), select, Condition.ALLOW),
        *ch.grant_role(b.model, "r1", Principal.user("u3")),
    ]
    for event in setup:
        b.model.apply(event)
    if deny:  # r1 denies what r2 allows: its deny item must name r1's holders at every step
        for event in ch.grant_privileges(
            b.model, "r1", ObjectRef.parse("table c.s1.a"), select, Condition.DENY
        ):
            b.model.apply(event)
        for event in ch.revoke_privileges(
            b.model, "r1", ObjectRef.parse("schema c.s1"), select, Condition.ALLOW
        ):
            b.model.apply(event)
    reconcile(backend, b.model, ALL)
    agrees(ranger_standin, backend, b)
    before = {str(f) for f in backend.read(b.model, ALL.resolve(b.model)).facts}
    assert any("pd_r1" in f for f in before)

    scoped(backend, b, ch.create_role(b.model, "R1"))
    agrees(ranger_standin, backend, b)
    if held:  # R1 held and granting: its holder named by its per-user role too
        scoped(backend, b, ch.grant_role(b.model, "R1", Principal.user("u1")))
        agrees(ranger_standin, backend, b)
        table = ObjectRef.parse("table c.s2.b")
        scoped(backend, b, ch.grant_privileges(b.model, "R1", table, select, Condition.ALLOW))
        agrees(ranger_standin, backend, b)
    twin = {str(f) for f in backend.read(b.model, ALL.resolve(b.model)).facts}
    assert not any("pd_r1" in f or "pd_R1" in f for f in twin), sorted(twin)

    if fresh:
        backend = backend_for(ranger_standin)
    scoped(backend, b, ch.delete_role(b.model, "R1"))
    agrees(ranger_standin, backend, b)
    after = {str(f) for f in backend.read(b.model, ALL.resolve(b.model)).facts}
    if not held:  # R1's grant gone with it: Ranger holds what it held before R1
        assert after == before, (sorted(after - before), sorted(before - after))
    assert any("pd_r1" in f for f in after)


def test_a_role_whose_holders_are_named_apart_is_not_taken_for_one_named_again(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``q`` (u1 and u3, no grant) and ``r1`` (u1 and u2) are named by no Hive policy while
    u1's per-user role is, beside u2 and u3 in s2, but never all of either role's holders
    in one item: the compile would name neither role there. A role created (the model's
    roles moved) looks them over, item by item, and finds none named again: no database is
    compiled for them, and the next sync, the roles standing, does not look again (the
    model's roles compared as they stand, not as a set made of them every sync)."""
    looked: list[tuple[list[str], set[str]]] = []
    stood_for = Compiling._stood_for

    def spy(
        self: Compiling, model: Model, index: ReadIndex, standing: list[tuple[str, dict[str, str]]]
    ) -> set[str]:
        found = stood_for(self, model, index, standing)
        looked.append((sorted(role for role, _ in standing), found))
        return found

    monkeypatch.setattr(Compiling, "_stood_for", spy)
    backend = backend_for(ranger_standin)
    b = start().create("table c.s2.x")
    m, select, gates = b.model, ["SELECT_TABLE"], ["USE_CATALOG", "USE_SCHEMA"]
    for role in ("q", "a", "d", "e"):
        for event in ch.create_role(m, role):
            m.apply(event)
    setup = [
        *(e for role, user in HELD for e in ch.grant_role(m, role, Principal.user(user))),
        *ch.grant_privileges(m, "a", ObjectRef.parse("catalog c"), gates),
        *ch.grant_privileges(m, "e", ObjectRef.parse("catalog c"), gates),
        *ch.grant_privileges(m, "a", ObjectRef.parse("table c.s2.b"), select),
        *ch.grant_privileges(m, "e", ObjectRef.parse("table c.s2.x"), select),
        *ch.grant_privileges(m, "d", ObjectRef.parse("schema c.s2"), select, Condition.DENY),
    ]
    for event in setup:
        m.apply(event)
    reconcile(backend, m, ALL)
    agrees(ranger_standin, backend, b)
    read = {str(f) for f in backend.read(m, ALL.resolve(m)).facts}
    assert any("pdu_u1" in f and "database=s2" in f for f in read), sorted(read)
    looked.clear()

    scoped(backend, b, ch.create_role(m, "z"))
    agrees(ranger_standin, backend, b)
    assert looked and all(found == set() for _, found in looked), looked
    assert {"q", "r1"} <= set(looked[0][0]), looked
    looked.clear()
    # the roles standing (compared as the model holds them, no stamp moved by roles alone)
    scoped(backend, b, ch.grant_privileges(m, "a", ObjectRef.parse("table c.s1.a"), ["MODIFY_TABLE"]))
    agrees(ranger_standin, backend, b)
    assert looked == []


#: the holders of the roles of the test above
HELD = [("q", "u1"), ("q", "u3"), ("a", "u1"), ("a", "u2"), ("e", "u2"), ("e", "u3"), ("d", "u2")]
