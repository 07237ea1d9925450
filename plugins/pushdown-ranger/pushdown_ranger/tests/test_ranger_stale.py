"""Faster must not be staler: what is kept between syncs never hides a hand edit.

The summary a backend keeps of its server (``Backend.discover``: for Ranger, the policy
and role versions) tells an idle sync whether anything changed by other hands. A full
sync records one once it converged; a hand edit landing after the sync's read-back and
before that summary was taken must still be seen by the next idle sync, never recorded
as already synced. Against the stand-in, judged by Ranger's own engine (:func:`probe`).
"""

from __future__ import annotations

from typing import Any

import pytest
from pushdown_lab.ranger_standin import Standin

from pushdown.journal.store import Store
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import Dispatcher
from pushdown_ranger.backend import RangerBackend

from .probe import probe
from .test_ranger_hostile_state import USERS, world
from .world import backend_for

pytestmark = pytest.mark.ranger


def _widen_by_hand(standin: Standin) -> None:
    """Somebody takes the deny items out of pushdown's policy of crm.orders (the reader
    role's DENY there: bob and alice read orders again)."""
    denying = next(p for p in standin.store.list_policies({}) if p.get("denyPolicyItems"))
    assert denying["resources"]["table"]["values"] == ["orders"]
    standin.store.update_policy(denying["id"], {**denying, "denyPolicyItems": []})


def test_a_hand_edit_after_a_full_syncs_read_back_is_seen_by_the_next_idle_sync(
    ranger_standin: Standin,
) -> None:
    """The hand edit (a DENY's items taken out) lands right after the full sync's read-back
    (converged), before the dispatcher keeps the server's summary. Recorded after the sync,
    the summary took the edit for seen: the idle sync found nothing, and bob kept reading
    orders against the model's DENY with the cursor at the tip. Taken before the sync
    reads, the edit moves the versions past it."""
    b = world()
    backend = backend_for(ranger_standin)
    store = Store()
    edited: list[int] = []

    class Edited(RangerBackend):
        def reread(self, *args: Any, **kw: Any) -> Any:
            out = super().reread(*args, **kw)
            if not edited:
                edited.append(1)
                _widen_by_hand(ranger_standin)
            return out

    backend.__class__ = Edited
    dispatcher = Dispatcher(store, {"rg": backend})
    [full] = dispatcher.run(b.model, full=True, load=lambda: (b.model, 0))
    assert full.ok and edited
    assert probe(ranger_standin, b.model, "sales", USERS).wider  # the hand edit is wider
    [idle] = dispatcher.run(b.model, load=lambda: (b.model, 0))
    assert idle.ok
    assert idle.plan is not None and idle.plan.scope == Scope.everything()
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []
    # that sync wrote: the summary it keeps is from before its read, so one more looks
    # (writes nothing), and the summary it keeps then stands
    [again] = dispatcher.run(b.model, load=lambda: (b.model, 0))
    assert again.ok and again.plan is not None and again.plan.empty
    [idle] = dispatcher.run(b.model, load=lambda: (b.model, 0))
    assert idle.ok and idle.plan is None


#: builds a model in a process whose count of stamps is far ahead of this one's, and
#: pickles it to stdout (a model made by another process: a worker, a forked server)
_AHEAD = """
import itertools, pickle, sys
from pushdown.model import state
state._STAMPS = itertools.count(10**15)
from tests.builders import Builder
b = (
    Builder()
    .users("alice", "bob")
    .catalog("sales", backend="rg")
    .schema("sales.crm")
    .table("sales.crm.orders")
    .role("y", users=["alice"])
    .role("z", users=["bob"])
    .allow("y", "table sales.crm.orders", "SELECT_TABLE")
    .allow("z", "table sales.crm.orders", "SELECT_TABLE")
)
sys.stdout.buffer.write(pickle.dumps(b.model))
"""


def test_a_model_pickled_by_another_process_proves_no_grant_chain_step_it_did_not_make() -> None:
    """The grant chain takes the roles whose stamps are newer than the latest it saw for
    the roles that moved. A model unpickled from a process that gave more stamps held
    stamps newer than any given here: z's revoke (outside the hint) was proved as y's
    move (in it, unmoved), and a split kept for z's holders stood (bob kept reading)."""
    import pickle
    import subprocess
    import sys

    from pushdown.model import changes as ch
    from pushdown.model.state import stamp_now
    from pushdown_ranger.compile.classes import GrantChain

    made = subprocess.run([sys.executable, "-c", _AHEAD], capture_output=True, check=True)
    model = pickle.loads(made.stdout)  # made by this test's own process
    latest = stamp_now()
    assert all(s < latest for s in (*model.roles_moved.values(), *model.grants_moved.values()))
    chain = GrantChain(model, 0)
    orders = ObjectRef.parse("table sales.crm.orders")
    for event in ch.revoke_privileges(model, "z", orders, ["SELECT_TABLE"], Condition.ALLOW):
        model.apply(event)
    assert not chain.proved(model, frozenset({"y"}))  # z moved, not y


def test_a_service_made_again_at_the_same_versions_is_read_again(ranger_standin: Standin) -> None:
    """Somebody deletes pushdown's Hive service, makes it again (its policies gone, its
    versions from the start), allows bob on orders there (the model DENYs it) and writes
    until its versions are those pushdown last read. The versions alone said nothing moved:
    every later sync, full ones too, took the kept read for Ranger's and planned nothing,
    bob reading orders for good. Another service id is another service: read again."""
    from pushdown.reconcile import planner
    from pushdown.reconcile.sync import reconcile

    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, Scope.everything())
    store = ranger_standin.store
    was = store.service("hive")
    store.delete_service("hive")
    store.create_service({"name": "hive", "type": was["type"], "configs": was.get("configs", {})})
    item = {"users": ["bob"], "accesses": [{"type": "select", "isAllowed": True}]}
    orders = {"database": {"values": ["crm"]}, "table": {"values": ["orders"]}, "column": {"values": ["*"]}}
    made = store.create_policy(
        {"service": "hive", "name": "restored", "resources": orders, "policyItems": [item]}
    )
    while store.service("hive")["policyVersion"] < was["policyVersion"]:
        made = store.update_policy(
            made["id"], {**made, "description": str(store.service("hive")["policyVersion"])}
        )
    n = 0
    while store.service("hive")["roleVersion"] < was["roleVersion"]:
        n += 1
        store.create_role({"name": f"filler{n}", "users": []})
    now = store.service("hive")
    assert (now["policyVersion"], now["roleVersion"]) == (was["policyVersion"], was["roleVersion"])
    assert probe(ranger_standin, b.model, "sales", USERS).wider  # bob reads orders
    plan = planner.plan(backend, b.model, Scope.everything())
    assert not plan.empty
    reconcile(backend, b.model, Scope.everything())
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []
