"""Cost follows the change in the Unity Catalog backend, counted not timed: the scoped sync
of a one-table grant maps as many users, decides for as many users and makes as many calls
to the server in an estate ten times larger (more users, roles and tables in a catalog no
backend enforces). Against the lab's stand-in.

The bound holds when no plugin implements ``pushdown_map_principal`` (the mapping is then
a pure function of the backend's settings, kept across syncs); with a hook every sync
that grants maps every user again (:class:`pushdown.reconcile.identity.KeptIdentity`)."""

from __future__ import annotations

from typing import Any

import pytest
from pushdown_lab.uc_standin.server import Standin

from pushdown.decide.compiler import EntitlementCompiler, Entitlements
from pushdown.decide.inventory import Inventory
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_unitycatalog import compile as uc_compile
from pushdown_unitycatalog.backend import UnityCatalogBackend
from pushdown_unitycatalog.client import API, UnityCatalog
from tests.costs import do, same_at_both_scales

#: what a one-table change may cost, whatever the estate or the size of the table's schema
#: (measured: 2 mappings, the scope's one user at the read and the compile, and 10 calls to
#: the stand-in: the read asks for the grants of the schema and the scope's table only, it
#: asked for every table's and the schema's functions, volumes and models before (15 calls
#: with 3 tables in the schema, 105 with 100); the read back asks only for the securables
#: the plan touched, it read the whole scope again before (27 calls, 3 mappings); before
#: the kept identity every user was mapped at each: 63 at scale 1, 603 at scale 10); 11 since
#: the token's sight of the catalog is asked at every read (one empty PATCH: a catalog made
#: again by another owner hides every grant from a token kept as its owner's)
MAPPINGS_BOUND = 5
CALLS_BOUND = 11
#: the users a one-table change's compile decides for, whatever the estate (measured: 2, the
#: holder ``ann`` and one user with nothing in the catalog; before, every user of the model:
#: 21 at scale 1, 201 at scale 10)
DECIDED_BOUND = 3


class _Counting(EntitlementCompiler):
    """The entitlement compiler, counting the users it decides for (its views)."""

    decided = 0

    def compile(self, inventory: Inventory, *args: Any, **kwargs: Any) -> Entitlements:
        result = super().compile(inventory, *args, **kwargs)
        _Counting.decided += len(result.by_user)
        return result


def _cost(server: Standin, scale: int, stable: bool = True, tables: int = 3) -> tuple[int, int, str, int]:
    """(mappings, server calls, plan, users decided) of a one-table grant in an estate of ``scale`` x
    (20 users, 10 roles, 100 tables in catalog ``lake``, no backend's) beside catalog ``c``
    (``tables`` tables in schema ``c.s`` on the stand-in, held by ``ann`` through role ``r``)."""
    admin, model = UnityCatalog(server.url, server.admin_token), Model()
    admin.call("POST", API + "/catalogs", {"name": "c"})
    admin.call("POST", API + "/schemas", {"name": "s", "catalog_name": "c"})
    do(model, ch.create_object(model, ObjectRef.parse("catalog c")))
    do(model, ch.create_object(model, ObjectRef.parse("schema c.s")))
    for t in range(tables):
        admin.call("POST", API + "/tables", {"name": f"t{t}", "catalog_name": "c", "schema_name": "s"})
        do(model, ch.create_object(model, ObjectRef.parse(f"table c.s.t{t}")))
    server.add_user("ann")
    do(model, ch.add_user(model, "ann"))
    do(model, ch.create_role(model, "r"))
    gates = ["USE_CATALOG", "USE_SCHEMA"]
    do(model, ch.grant_privileges(model, "r", ObjectRef.parse("catalog c"), gates, Condition("ALLOW")))
    do(model, ch.grant_role(model, "r", Principal.user("ann")))
    do(model, ch.create_object(model, ObjectRef.parse("catalog lake")))
    do(model, ch.create_object(model, ObjectRef.parse("schema lake.raw")))
    for i in range(20 * scale):
        do(model, ch.add_user(model, f"u{i:04}"))
    for t in range(100 * scale):
        do(model, ch.create_object(model, ObjectRef.parse(f"table lake.raw.t{t:04}")))
    for i in range(10 * scale):
        do(model, ch.create_role(model, f"role{i:04}"))
        lake = ObjectRef.parse(f"table lake.raw.t{i % (100 * scale):04}")
        do(model, ch.grant_privileges(model, f"role{i:04}", lake, ["SELECT_TABLE"], Condition("ALLOW")))
        do(model, ch.grant_role(model, f"role{i:04}", Principal.user(f"u{(2 * i) % (20 * scale):04}")))
    settings = {"url": server.url, "token": server.admin_token, "principals": ["ann"]}
    context = BackendContext("uc", settings, catalogs=frozenset({"c"}), mapping_stable=lambda: stable)
    backend = UnityCatalogBackend(context)
    reconcile(backend, model, Scope.everything())
    backend.kept.calls, backend.uc.calls, _Counting.decided = 0, 0, 0
    grant = ch.grant_privileges(
        model, "r", ObjectRef.parse("table c.s.t1"), ["SELECT_TABLE"], Condition("ALLOW")
    )
    do(model, grant)
    plan, _ = reconcile(backend, model, Scope.union(scope_of(e) for e in grant))
    return (
        backend.kept.calls,
        backend.uc.calls,
        f"{plan.adds} added, {plan.removes} removed",
        _Counting.decided,
    )


@pytest.fixture(autouse=True)
def _counting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uc_compile, "EntitlementCompiler", _Counting)


def test_a_one_table_change_costs_the_same_in_an_estate_ten_times_larger() -> None:
    """Without a mapping hook (the mapping is stable) only the scope's users are mapped."""

    def cost(scale: int) -> tuple[int, int, str, int]:
        with Standin() as server:
            return _cost(server, scale)

    mapped, calls, plan, decided = same_at_both_scales(cost)
    assert plan == "1 added, 0 removed"
    assert mapped <= MAPPINGS_BOUND
    assert calls <= CALLS_BOUND
    assert decided <= DECIDED_BOUND  # the catalog's holders, not every user


def test_with_a_mapping_hook_every_user_is_mapped_again_before_a_grant() -> None:
    """A hook may answer otherwise for a user outside the scope (a clash anywhere must be
    seen): the kept names are not trusted, every user of the estate is mapped again."""
    with Standin() as server:
        mapped, _, plan, _ = _cost(server, 1, stable=False)
    assert plan == "1 added, 0 removed"
    assert mapped >= 21  # ann and the 20 users of the estate, each mapped again


def test_a_one_table_change_costs_the_same_in_a_schema_ten_times_larger() -> None:
    """The scoped read asks for the grants of the schema and the changed table, not of
    every table of the schema: 9 tables or 99, as many calls (one page of
    the listing either way)."""

    def cost(scale: int) -> tuple[int, int, str, int]:
        with Standin() as server:  # 9 or 99: the open server lists 100 a page, a 100th costs a page more
            return _cost(server, 1, tables=10 * scale - 1)

    _, calls, plan, _ = same_at_both_scales(cost)
    assert plan == "1 added, 0 removed"
    assert calls <= CALLS_BOUND
