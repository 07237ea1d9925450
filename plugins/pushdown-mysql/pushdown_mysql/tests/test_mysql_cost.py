"""Cost follows the change, counted not timed: the scoped compile of a one-table grant
visits as many users' mappings and model objects in an estate ten times larger. Pure.

The counted bound holds when no plugin implements ``pushdown_map_principal`` (the mapping
is then a pure function of the backend's settings, kept across syncs). With a mapping hook
the cost is whole-model by design: the hook may answer otherwise for any user at any time,
so every sync that grants maps every user again, or a clash caused by a user outside the
scope would go unseen."""

from __future__ import annotations

import pytest

from pushdown.model import changes as ch
from pushdown.model.securables import ObjectRef
from pushdown.reconcile.scope import Scope, scope_of
from pushdown_mysql.compile import AccountNaming, ServerObjects, compile_desired
from pushdown_mysql.identity import sharing
from pushdown_mysql.names import keyed_objects
from tests.costs import Counts, Mapper, counting_objects, do, estate, same_at_both_scales

#: what a one-table change may visit, whatever the estate (measured 3 and 1; before the
#: kept identity and the model's marks: 21 and 121 at scale 1, 201 and 1,201 at scale 10)
MAPPINGS_BOUND = 5
OBJECTS_BOUND = 10


def one_table_change(scale: int, monkeypatch: pytest.MonkeyPatch) -> Counts:
    """The estate: :func:`tests.costs.estate` in a catalog the MySQL backend ``m`` enforces."""
    counts, mapper = Counts(), Mapper()
    model = estate(scale, "m")
    naming = AccountNaming(map_principal=mapper, mapping_stable=lambda: True)  # no mapping hook
    inventory = ServerObjects(frozenset({"crm"}), frozenset({("crm", "t0"), ("crm", "t1")}))
    everything = Scope.everything().resolve(model)
    compile_desired(model, "c", inventory, frozenset(), naming, everything)  # the first sync
    mapper.calls = 0
    events = ch.grant_privileges(model, "r1", ObjectRef.parse("table c.crm.t0"), ["MODIFY_TABLE"])
    do(model, events)
    with counting_objects(monkeypatch, counts):
        scope = scope_of(events[0]).resolve(model)
        scope = sharing(scope, model, naming)
        compile_desired(model, "c", inventory, frozenset(), naming, scope)
    counts.mappings = mapper.calls
    return counts


def test_a_one_table_change_visits_as_much_in_an_estate_ten_times_larger(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small = same_at_both_scales(lambda scale: one_table_change(scale, monkeypatch))
    assert small.mappings <= MAPPINGS_BOUND and small.objects <= OBJECTS_BOUND, small


def test_objects_with_grants_are_found_by_key_within_their_catalog() -> None:
    model = estate(1, "m")
    data = ("schema", "table")
    everywhere = {o for o in (*model.by_object, *model.owners) if o.type.value in data}
    assert set(keyed_objects(model, "c")) == {o for o in everywhere if o.catalog == "c"}
