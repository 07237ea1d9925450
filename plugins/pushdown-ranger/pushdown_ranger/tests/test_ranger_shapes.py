"""The shapes, pure: which roles and policy items a model compiles to."""

from __future__ import annotations

from pushdown.model.state import Model
from pushdown_ranger.compile.desired import RangerNaming, compile_desired, hive_database, hive_table
from pushdown_ranger.facts import PolicyFact, RoleFact, fact_from_json
from tests.builders import Builder

WILD = (("column", ("*",), False), ("database", ("crm",), False), ("table", ("?*",), False))
NAMING = RangerNaming()


def world() -> Builder:
    return (
        Builder()
        .users("alice", "bob", "carol")
        .group("analysts", "alice")
        .catalog("sales", backend="rg")
        .schema("sales.crm")
        .table("sales.crm.orders")
        .table("sales.crm.leads")
        .role("reader", users=["bob"], groups=["analysts"])
        .allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
    )


def policies(model: Model, deny: bool = True) -> dict[object, PolicyFact]:
    desired = compile_desired(model, ["sales"], NAMING, {"hive": deny})
    return {f.resources: f for f in desired.facts if isinstance(f, PolicyFact)}


def roles(model: Model) -> dict[str, RoleFact]:
    desired = compile_desired(model, ["sales"], NAMING, {"hive": True})
    return {f.name: f for f in desired.facts if isinstance(f, RoleFact)}


def test_a_schema_wide_grant_is_one_wildcard_policy_naming_the_role() -> None:
    got = policies(world().model)
    assert set(got) == {WILD}
    assert got[WILD].allow == {("pd_reader", "select")} and not got[WILD].deny
    # the group is expanded to its model members: Ranger never resolves a group for pushdown
    assert roles(world().model)["pd_reader"] == RoleFact("pd_reader", frozenset({"alice", "bob"}))


def test_a_deny_on_one_table_is_a_deny_item_on_that_table() -> None:
    got = policies(world().deny("reader", "table sales.crm.orders", "SELECT_TABLE").model)
    assert got[hive_table("crm", "orders")].deny == {("pd_reader", "select")}
    assert got[WILD].allow == {("pd_reader", "select")}


def test_without_deny_items_the_exception_becomes_per_table_allow_items() -> None:
    model = world().deny("reader", "table sales.crm.orders", "SELECT_TABLE").model
    got = policies(model, deny=False)
    assert WILD not in got and hive_table("crm", "orders") not in got
    assert got[hive_table("crm", "leads")].allow == {("pd_reader", "select")}
    notes = compile_desired(model, ["sales"], NAMING, {"hive": False}).notes
    assert any("enableDenyAndExceptionsInPolicies" in n for n in notes)


def test_a_role_whose_holders_do_not_all_qualify_becomes_per_user_roles() -> None:
    # bob also holds "blocker", which denies the catalog's gate: only alice may read
    model = world().role("blocker", users=["bob"]).deny("blocker", "catalog sales", "USE_CATALOG").model
    got = policies(model)
    assert got[WILD].allow == {("pdu_alice", "select")}
    assert roles(model)["pdu_alice"] == RoleFact("pdu_alice", frozenset({"alice"}))
    assert "pdu_bob" not in roles(model)


def test_an_owner_gets_database_level_accesses_and_every_table_access() -> None:
    model = world().owner("catalog sales", "carol").model
    got = policies(model)
    assert got[hive_database("crm")].allow == {("pdu_carol", a) for a in ("alter", "drop")}
    every = {"select", "update", "alter", "drop", "create"}
    assert {a for r, a in got[WILD].allow if r == "pdu_carol"} == every


def test_create_table_is_create_on_the_new_table_and_never_replaces_a_table_one_may_not_drop() -> None:
    """CREATE TABLE is asked as ``create`` on the new table (Hive's and Spark's Ranger
    plugins); on a registered table that ``create`` replaces it, so it is denied to whoever
    may not drop that table."""
    model = (
        world()
        .allow("reader", "schema sales.crm", "CREATE_TABLE")
        .owner("table sales.crm.leads", "bob")
        .model
    )
    got = policies(model)
    assert ("pd_reader", "create") in got[WILD].allow
    assert hive_database("crm") not in got
    assert got[hive_table("crm", "orders")].deny == {("pd_reader", "create")}
    # alice may not drop leads either: her own role's deny item (bob owns it: no deny for him)
    assert got[hive_table("crm", "leads")].deny == {("pdu_alice", "create")}
    without = policies(model, deny=False)  # no deny items: no create where one would be needed
    assert not any(a == "create" for f in without.values() for _, a in f.allow)


def test_the_every_table_policy_does_not_name_the_database_itself() -> None:
    model = world().allow("reader", "catalog sales", "MODIFY_TABLE").model
    got = policies(model)
    assert {("pd_reader", "update"), ("pd_reader", "alter")} <= got[WILD].allow
    assert WILD[2] == ("table", ("?*",), False)  # not "*": that would alter the database too
    assert hive_database("crm") not in got


def test_topics_and_filesets_get_one_policy_each() -> None:
    model = (
        world()
        .create("topic sales.crm.events")
        .create("fileset sales.crm.files", properties={"location": "hdfs://nn:8020/data/files/"})
        .create("fileset sales.crm.nowhere")
        .allow("reader", "catalog sales", "CONSUME_TOPIC", "READ_FILESET")
        .model
    )
    desired = compile_desired(model, ["sales"], NAMING, {"hive": True})
    by_service = {(f.service, f.resources): f for f in desired.facts if isinstance(f, PolicyFact)}
    topic = by_service[("kafka", (("topic", ("events",), False),))]
    assert topic.allow == {("pd_reader", "consume"), ("pd_reader", "describe")}
    path = by_service[("hdfs", (("path", ("/data/files",), True),))]
    assert path.allow == {("pd_reader", "read"), ("pd_reader", "execute")}
    assert any("nowhere" in n and "location" in n for n in desired.notes)


def test_names_ranger_cannot_single_out_are_not_pushed() -> None:
    for odd in ("t*", "t{USER}", "t\\x"):  # a wildcard; Ranger's token delimiters and escape
        model = world().table(f"sales.crm.{odd}").model
        got = policies(model)
        assert WILD not in got and hive_table("crm", odd) not in got
        assert got[hive_table("crm", "leads")].allow == {("pd_reader", "select")}


def test_case_twins_are_one_resource_with_the_users_allowed_on_both() -> None:
    model = world().table("sales.crm.ORDERS").deny("reader", "table sales.crm.ORDERS", "SELECT_TABLE").model
    got = policies(model)
    assert got[WILD].allow == {("pd_reader", "select")}
    assert got[hive_table("crm", "orders")].deny == {("pd_reader", "select")}  # orders is ORDERS to Hive
    assert hive_table("crm", "ORDERS") not in got
    notes = compile_desired(model, ["sales"], NAMING, {"hive": True}).notes
    assert any("one Hive table" in n for n in notes)


def test_facts_round_trip_through_json() -> None:
    desired = compile_desired(
        world().deny("reader", "table sales.crm.orders", "SELECT_TABLE").model,
        ["sales"],
        NAMING,
        {"hive": True},
    )
    for fact in desired.facts:
        assert fact_from_json(fact.to_json()) == fact
