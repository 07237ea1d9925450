"""A one-table change reads its schema alone (the schema's grants and the table's, not every
table's): where the change moves the schema-level SELECT, the schema is read whole and
every table's grants follow; a schema-level grant made by hand is revoked at once; a
grant made by hand on another table waits for a sync that reads it. Against the lab's
stand-in: after each scoped sync the full reconcile has nothing left to do."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from pushdown_lab.uc_standin.server import Standin

from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.planner import plan
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_unitycatalog.backend import UnityCatalogBackend
from pushdown_unitycatalog.client import API, UnityCatalog
from tests.costs import do

TABLES = 5


class _Lab:
    def __init__(self, server: Standin) -> None:
        self.admin, self.model = UnityCatalog(server.url, server.admin_token), Model()
        self.admin.call("POST", API + "/catalogs", {"name": "c"})
        self.admin.call("POST", API + "/schemas", {"name": "s", "catalog_name": "c"})
        do(self.model, ch.create_object(self.model, ObjectRef.parse("catalog c")))
        do(self.model, ch.create_object(self.model, ObjectRef.parse("schema c.s")))
        for t in range(TABLES):
            self.admin.call(
                "POST", API + "/tables", {"name": f"t{t}", "catalog_name": "c", "schema_name": "s"}
            )
            do(self.model, ch.create_object(self.model, ObjectRef.parse(f"table c.s.t{t}")))
        server.add_user("ann")
        do(self.model, ch.add_user(self.model, "ann"))
        do(self.model, ch.create_role(self.model, "r"))
        self.change(
            ch.grant_privileges(
                self.model,
                "r",
                ObjectRef.parse("catalog c"),
                ["USE_CATALOG", "USE_SCHEMA"],
                Condition("ALLOW"),
            )
        )
        self.change(ch.grant_role(self.model, "r", Principal.user("ann")))
        context = BackendContext(
            "uc",
            {"url": server.url, "token": server.admin_token, "principals": ["ann"]},
            catalogs=frozenset({"c"}),
        )
        self.backend = UnityCatalogBackend(context)
        reconcile(self.backend, self.model, Scope.everything())

    def change(self, events: Iterable[object], sync: bool = False) -> None:
        events = list(events)
        do(self.model, events)
        if sync:
            scope = Scope.union(scope_of(e) for e in events)  # type: ignore[arg-type]
            reconcile(self.backend, self.model, scope)

    def table(self, name: str, privilege: str, condition: str = "ALLOW") -> None:
        obj = ObjectRef.parse(f"table c.s.{name}")
        self.change(ch.grant_privileges(self.model, "r", obj, [privilege], Condition(condition)), sync=True)

    def selects(self) -> set[str]:
        """Where ann holds SELECT on the server: ``s`` (the schema) and table names."""
        out = {"s"} if "SELECT" in self.admin.permissions("schema", "c.s").get("ann", set()) else set()
        for t in range(TABLES):
            if "SELECT" in self.admin.permissions("table", f"c.s.t{t}").get("ann", set()):
                out.add(f"t{t}")
        return out

    def settled(self) -> bool:
        """The full reconcile has nothing left to do."""
        return plan(self.backend, self.model, Scope.everything()).empty


@pytest.fixture
def lab() -> Iterable[_Lab]:
    with Standin() as server:
        yield _Lab(server)


def test_a_one_table_change_that_moves_the_schema_level_grant_reads_the_schema_whole(lab: _Lab) -> None:
    schema = ObjectRef.parse("schema c.s")
    lab.change(ch.grant_privileges(lab.model, "r", schema, ["SELECT_TABLE"], Condition("ALLOW")), sync=True)
    assert lab.selects() == {"s"}
    lab.table("t2", "SELECT_TABLE", "DENY")  # the schema grant goes; the other four tables get theirs
    assert lab.selects() == {"t0", "t1", "t3", "t4"}
    assert lab.settled()
    obj = ObjectRef.parse("table c.s.t2")
    lab.change(ch.revoke_privileges(lab.model, "r", obj, ["SELECT_TABLE"], Condition("DENY")), sync=True)
    assert lab.selects() == {"s"}  # and back: the per-table grants are revoked with it
    assert lab.settled()


def test_a_one_table_change_that_keeps_the_schema_level_choice_touches_that_table_alone(lab: _Lab) -> None:
    lab.table("t1", "SELECT_TABLE")
    lab.table("t3", "SELECT_TABLE")
    assert lab.selects() == {"t1", "t3"}
    assert lab.settled()


def test_a_schema_level_grant_made_by_hand_is_revoked_by_a_one_table_change(lab: _Lab) -> None:
    lab.admin.update("schema", "c.s", "ann", ["SELECT"], [])
    lab.table("t0", "SELECT_TABLE")
    assert lab.selects() == {"t0"}
    assert lab.settled()


def test_a_grant_made_by_hand_on_another_table_waits_for_a_read_of_it(lab: _Lab) -> None:
    """Not read by a one-table change elsewhere in the schema; the full reconcile revokes it."""
    lab.admin.update("table", "c.s.t4", "ann", ["SELECT"], [])
    lab.table("t0", "SELECT_TABLE")
    assert lab.selects() == {"t0", "t4"}
    assert not lab.settled()
    reconcile(lab.backend, lab.model, Scope.everything())
    assert lab.selects() == {"t0"}
