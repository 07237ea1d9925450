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
    orders against the model's DENY with the cursor at the tip. Taken before the sync reads, the edit moves the versions past it."""
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
