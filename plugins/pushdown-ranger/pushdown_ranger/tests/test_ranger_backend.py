"""The backend against the stand-in: convergence, the fence, call counts, refusals and faults."""

from __future__ import annotations

import pytest
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import BackendError, ConfigError, TemporaryBackendError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.backend import RangerBackend
from pushdown_ranger.facts import PolicyFact
from pushdown_ranger.readback import policy_name
from tests.builders import Builder

from .world import backend_for, sales

pytestmark = pytest.mark.ranger
ALL = Scope.everything()


def do(builder: Builder, events: list[object]) -> None:
    for event in events:
        builder.model.apply(event)  # type: ignore[arg-type]


def writes(standin: Standin) -> list[tuple[str, str, int]]:
    return [r for r in standin.request_log if r[0] != "GET"]


def test_apply_then_the_plan_is_empty_and_a_no_op_sync_is_one_version_check(ranger_standin: Standin) -> None:
    world = sales().deny("reader", "table sales.crm.orders", "SELECT_TABLE")
    backend = backend_for(ranger_standin)
    plan, applied = reconcile(backend, world.model, ALL)
    assert applied and plan.adds == 3
    ranger_standin.reset_log()
    assert planner.plan(backend, world.model, ALL).empty
    # the services' policy versions and the role version (Ranger's services do not carry
    # it); not the service definitions: Ranger moves the policy version of every service of a
    # definition it updates, and the versions stand since they were read
    assert ranger_standin.request_log == [
        ("GET", "/service/public/v2/api/service", 200),
        ("GET", "/service/roles/secure/download/hive", 304),
    ]


def test_a_service_definition_edited_between_scoped_syncs_is_seen_by_the_next(
    ranger_standin: Standin,
) -> None:
    """The service definitions are asked again when pushdown's services' policy versions
    moved since they were read (Ranger moves them when it updates a definition): deny items
    turned off by hand between two scoped syncs are seen by the second, whose snapshot then
    holds no deny option, and the next sync of everything writes no deny item."""
    from apache_ranger.client.ranger_client import RangerClient

    world = sales().deny("reader", "table sales.crm.orders", "SELECT_TABLE")
    backend = backend_for(ranger_standin)
    reconcile(backend, world.model, ALL)
    assert any(p.get("denyPolicyItems") for p in ranger_standin.store.list_policies({}))

    def scoped(table: str) -> list[str]:
        events = ch.grant_privileges(world.model, "reader", ObjectRef.parse(table), ["MODIFY_TABLE"])
        do(world, events)
        ranger_standin.reset_log()
        reconcile(backend, world.model, Scope.union(scope_of(e) for e in events))
        return [path for method, path, _ in ranger_standin.request_log if method == "GET"]

    assert "/service/public/v2/api/servicedef" not in scoped("table sales.crm.leads")
    assert backend.last is not None and backend.last.deny["hive"] is True
    client = RangerClient(ranger_standin.url, ranger_standin.auth)  # a hand edit, over REST
    sdef = client.get_service_def("hive")
    sdef.options = {**(sdef.options or {}), "enableDenyAndExceptionsInPolicies": "false"}
    client.update_service_def("hive", sdef)
    assert "/service/public/v2/api/servicedef" in scoped("table sales.crm.orders")
    assert backend.last is not None and backend.last.deny["hive"] is False
    reconcile(backend, world.model, ALL)
    assert all(not p.get("denyPolicyItems") for p in ranger_standin.store.list_policies({}))
    assert planner.plan(backend, world.model, ALL).empty


def test_one_model_change_is_one_write_per_changed_policy(ranger_standin: Standin) -> None:
    world = sales()
    backend = backend_for(ranger_standin)
    reconcile(backend, world.model, ALL)
    ranger_standin.reset_log()
    do(
        world,
        ch.grant_privileges(
            world.model, "reader", ObjectRef.parse("catalog sales"), ["MODIFY_TABLE"], Condition.ALLOW
        ),
    )
    plan, _ = reconcile(backend, world.model, ALL)
    assert plan.changes == 1 and not plan.adds  # the every-table policy, edited in place
    assert len(writes(ranger_standin)) == 1
    assert all(m in ("PUT", "POST") for m, _, _ in writes(ranger_standin))
    # before: the version check (the service definitions as read while the versions stand);
    # after: the version check again, which shows only our write, so Ranger's answer to it
    # is the read-back (no bulk read)
    reads = [(m, p, s) for m, p, s in ranger_standin.request_log if m == "GET"]
    assert [s for _, _, s in reads] == [200, 304, 200, 304]
    assert planner.plan(backend, world.model, ALL).empty


def test_a_write_by_someone_else_means_the_next_sync_reads_everything_again(ranger_standin: Standin) -> None:
    world = sales()
    backend = backend_for(ranger_standin)
    reconcile(backend, world.model, ALL)
    backend.api.create_role("hive", {"name": "someone-elses", "users": []})  # the role version moves
    ranger_standin.reset_log()
    reconcile(backend, world.model, ALL)
    paths = [p for m, p, _ in ranger_standin.request_log]
    assert "/service/public/v2/api/roles" in paths  # read again in bulk
    assert any(p.endswith("/policy") for p in paths)  # the policies too
    assert not [r for r in ranger_standin.request_log if r[0] != "GET"]  # nothing to write: theirs is left
    assert "someone-elses" in {r["name"] for r in ranger_standin.store.list_roles({})}
    assert planner.plan(backend, world.model, ALL).empty


def test_a_hand_made_policy_on_the_same_resources_is_merged_into_and_kept(ranger_standin: Standin) -> None:
    backend = backend_for(ranger_standin)
    hand = {
        "service": "hive",
        "name": "analysts by hand",
        "resources": {n: {"values": [v]} for n, v in (("database", "crm"), ("table", "?*"), ("column", "*"))},
        "policyItems": [{"accesses": [{"type": "select", "isAllowed": True}], "users": ["zed"]}],
    }
    made = backend.api.create_policy(hand)
    world = sales()
    reconcile(backend, world.model, ALL)
    policy = ranger_standin.store.policy(made["id"])
    assert len(ranger_standin.store.list_policies({"serviceName": "hive"})) == 1
    assert {tuple(i.get("users") or ()) for i in policy["policyItems"]} == {("zed",), ()}
    do(
        world,
        ch.revoke_privileges(
            world.model, "reader", ObjectRef.parse("catalog sales"), ["SELECT_TABLE"], Condition.ALLOW
        ),
    )
    reconcile(backend, world.model, ALL)
    policy = ranger_standin.store.policy(made["id"])  # still there, with zed's item alone
    assert [i["users"] for i in policy["policyItems"]] == [["zed"]]
    assert planner.plan(backend, world.model, ALL).empty


def test_items_and_roles_without_the_prefix_are_left_alone(ranger_standin: Standin) -> None:
    backend = backend_for(ranger_standin)
    backend.api.create_role("hive", {"name": "etl", "users": [{"name": "zed", "isAdmin": False}]})
    world = sales()
    reconcile(backend, world.model, ALL)
    do(world, ch.delete_role(world.model, "reader"))
    plan, _ = reconcile(backend, world.model, ALL)
    assert plan.removes == 2  # the policy (phase 1) before the role (phase 0)
    assert [r["name"] for r in ranger_standin.store.list_roles({})] == ["etl"]
    assert ranger_standin.store.list_policies({}) == []


def test_a_renamed_table_moves_its_policy(ranger_standin: Standin) -> None:
    world = sales().deny("reader", "table sales.crm.orders", "SELECT_TABLE")
    backend = backend_for(ranger_standin)
    reconcile(backend, world.model, ALL)
    world.rename("table sales.crm.orders", "orders2")
    plan, _ = reconcile(backend, world.model, ALL)
    assert (plan.adds, plan.removes) == (1, 1)
    tables = {p["resources"]["table"]["values"][0] for p in ranger_standin.store.list_policies({})}
    assert tables == {"?*", "orders2"}


def test_without_deny_in_the_service_definition_no_deny_item_is_written(ranger_standin: Standin) -> None:
    ranger_standin.store.service_defs["hive"].setdefault("options", {})[
        "enableDenyAndExceptionsInPolicies"
    ] = "false"
    world = sales().deny("reader", "table sales.crm.orders", "SELECT_TABLE")
    backend = backend_for(ranger_standin)
    plan, _ = reconcile(backend, world.model, ALL)
    assert any("enableDenyAndExceptionsInPolicies" in n for n in plan.notes)
    assert all(not p.get("denyPolicyItems") for p in ranger_standin.store.list_policies({}))
    tables = {p["resources"]["table"]["values"][0] for p in ranger_standin.store.list_policies({})}
    assert tables == {"leads"}


def test_deny_items_off_writes_none_even_where_the_service_definition_enables_them(
    ranger_standin: Standin,
) -> None:
    world = sales().deny("reader", "table sales.crm.orders", "SELECT_TABLE")
    backend = backend_for(ranger_standin, deny_items="off")
    plan, _ = reconcile(backend, world.model, ALL)
    assert any("enableDenyAndExceptionsInPolicies" in n for n in plan.notes)
    assert all(not p.get("denyPolicyItems") for p in ranger_standin.store.list_policies({}))
    assert planner.plan(backend, world.model, ALL).empty


def test_deny_items_must_be_auto_or_off(ranger_standin: Standin) -> None:
    with pytest.raises(ConfigError, match="deny_items"):
        backend_for(ranger_standin, deny_items="on")


def test_a_policy_name_taken_by_hand_is_written_under_another_name(ranger_standin: Standin) -> None:
    """A hand-made policy already uses the name pushdown gives the wildcard policy (Ranger
    refuses a second one, 3006): the policy is written under another name (issue 23, N11)."""
    backend = backend_for(ranger_standin)
    wild = (("column", ("*",), False), ("database", ("crm",), False), ("table", ("?*",), False))
    squatter = {
        "service": "hive",
        "name": policy_name(PolicyFact("hive", wild, frozenset(), frozenset())),
        "resources": {"database": {"values": ["elsewhere"]}},
        "policyItems": [],
    }
    backend.api.create_policy(squatter)
    world = sales().deny("reader", "table sales.crm.orders", "SELECT_TABLE")
    reconcile(backend, world.model, ALL)
    written = {p["name"] for p in ranger_standin.store.list_policies({}) if p["name"] != squatter["name"]}
    assert len(written) == 2 and all(n.startswith("pushdown column=*,database=crm,table=") for n in written)
    assert planner.plan(backend, world.model, ALL).empty


def test_503s_during_apply_are_retried(ranger_standin: Standin) -> None:
    backend = backend_for(ranger_standin)
    world = sales()
    plan = planner.plan(backend, world.model, ALL)
    ranger_standin.faults.fail_next(2)
    reconcile(backend, world.model, ALL)
    assert backend.api.calls.retries >= 2
    assert planner.plan(backend, world.model, ALL).empty and plan.adds == 2


def test_a_server_that_dies_mid_apply_gives_a_clear_error_and_the_next_sync_converges(
    ranger_standin: Standin,
) -> None:
    world = sales().deny("reader", "table sales.crm.orders", "SELECT_TABLE").role("w", users=["carol"])
    backend = backend_for(ranger_standin, retries=1)
    ranger_standin.faults.die_after_writes(2)
    with pytest.raises(TemporaryBackendError, match=r"no answer .* of \d+ operation\(s\) done") as caught:
        reconcile(backend, world.model, ALL, retries=0)
    assert ranger_standin.auth[1] not in str(caught.value)
    ranger_standin.restart()
    plan, _ = reconcile(backend, world.model, ALL)
    assert plan.adds >= 1 and not plan.removes
    assert planner.plan(backend, world.model, ALL).empty


def test_role_members_follow_the_model(ranger_standin: Standin) -> None:
    world = sales()
    backend = backend_for(ranger_standin)
    reconcile(backend, world.model, ALL)
    do(world, ch.grant_role(world.model, "reader", Principal.user("carol")))
    plan, _ = reconcile(backend, world.model, ALL)
    assert plan.changes == 1 and not plan.adds
    role = ranger_standin.store.role_by_name("pd_reader")
    # the group analysts as its members (alice), as the model says: never the group itself
    assert {m["name"] for m in role["users"]} == {"alice", "bob", "carol"} and role["groups"] == []


def test_a_hand_made_item_for_a_model_user_is_a_finding_and_left_alone(ranger_standin: Standin) -> None:
    backend = backend_for(ranger_standin)
    hand = {
        "service": "hive",
        "name": "carol by hand",
        "resources": {"database": {"values": ["crm"]}, "table": {"values": ["orders"]}},
        "policyItems": [{"accesses": [{"type": "select", "isAllowed": True}], "users": ["carol"]}],
    }
    made = backend.api.create_policy(hand)
    world = sales()
    reconcile(backend, world.model, ALL)
    plan = planner.plan(backend, world.model, ALL)
    assert plan.empty and plan.drift
    assert plan.findings == (
        "policy 'carol by hand' (hive:database=crm,table=orders) allows select to user carol, "
        "outside pushdown",
    )
    assert ranger_standin.store.policy(made["id"])["policyItems"][0]["users"] == ["carol"]


def test_a_scoped_sync_compiles_and_diffs_only_the_databases_its_events_name(ranger_standin: Standin) -> None:
    world = sales().schema("sales.ops").table("sales.ops.runs")
    backend = backend_for(ranger_standin)
    reconcile(backend, world.model, ALL)
    crm = [
        p for p in ranger_standin.store.list_policies({}) if p["resources"]["database"]["values"] == ["crm"]
    ]
    backend.api.delete_policy(crm[0]["id"], crm[0]["name"])  # drift in crm, by hand
    events = ch.grant_privileges(
        world.model, "reader", ObjectRef.parse("table sales.ops.runs"), ["MODIFY_TABLE"], Condition.ALLOW
    )
    do(world, events)
    scope = Scope.union(scope_of(e) for e in events)
    plan, _ = reconcile(backend, world.model, scope)
    assert [op.action for op in plan.ops] == ["add"]  # ops.runs only: crm is outside the scope
    assert "database=ops" in str(plan.ops[0])
    assert planner.plan(backend, world.model, ALL).adds == 1  # the full plan sees crm's drift


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("url", "ranger:6080"),
        ("url", "ftp://ranger:6080"),
        ("url", "http://ranger:port"),
        ("url", "http://ranger:6080/?x=1"),
        ("url", 6080),
        ("user", ""),
        ("timeout", "abc"),
        ("timeout", 0),
        ("retries", -1),
        ("retries", 1.5),
        ("backoff", float("nan")),
        ("page_size", 0),
        ("hive_service", "hive/../../roles"),
        ("hdfs_service", "hdfs?x=1"),
        ("kafka_service", ""),
        ("role_service", "a b"),
        ("label", ""),
        ("role_prefix", 7),
    ],
)
def test_a_bad_setting_is_a_config_error_naming_the_key(key: str, value: object) -> None:
    settings = {"url": "http://127.0.0.1:6080", key: value}
    with pytest.raises(ConfigError, match=rf"backend rg: setting '{key}': "):
        RangerBackend(BackendContext("rg", settings))


def test_credentials_in_the_url_are_refused_and_never_repeated() -> None:
    with pytest.raises(ConfigError, match="must not carry a user or password") as caught:
        RangerBackend(BackendContext("rg", {"url": "http://admin:s3cr3t-pw@ranger:6080"}))
    assert "s3cr3t-pw" not in str(caught.value)


def test_a_policy_disabled_by_hand_or_an_exception_naming_a_pushdown_role_is_a_finding(
    ranger_standin: Standin,
) -> None:
    world = sales().deny("reader", "table sales.crm.orders", "SELECT_TABLE")
    backend = backend_for(ranger_standin)
    reconcile(backend, world.model, ALL)
    assert planner.plan(backend, world.model, ALL).findings == ()
    denying = next(p for p in ranger_standin.store.list_policies({}) if p.get("denyPolicyItems"))
    backend.api.update_policy(denying["id"], {**denying, "isEnabled": False})  # the DENY is off
    findings = planner.plan(backend, world.model, ALL).findings
    disabled = [f for f in findings if "is disabled:" in f and denying["name"] in f]
    assert len(disabled) == 1 and any("database crm" in f and "no deny items" in f for f in findings)
    exempt = {"accesses": [{"type": "select", "isAllowed": True}], "roles": ["pd_reader"]}
    backend.api.update_policy(denying["id"], {**denying, "denyExceptions": [exempt]})
    findings = planner.plan(backend, world.model, ALL).findings
    assert (
        f"policy {denying['name']!r} (hive:column=*,database=crm,table=orders): "
        "denyExceptions names pushdown's role(s) pd_reader, outside pushdown"
    ) in findings


def test_members_join_a_role_only_after_the_policies_so_a_refused_policy_write_never_widens(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """reader's holders all pass the USE gates (from ga, gb), so the every-table policy names
    pd_reader; c joins reader without a gate: the policy must switch to pd_ga, pd_gb. Were
    pd_reader's new member written first, a refused (or never reached) policy write would
    leave c allowed."""
    world = (
        Builder()
        .users("a", "b", "c")
        .catalog("sales", backend="rg")
        .schema("sales.crm")
        .table("sales.crm.orders")
        .role("reader", users=["a", "b"])
        .role("ga", users=["a"])
        .role("gb", users=["b"])
        .allow("reader", "catalog sales", "SELECT_TABLE")
        .allow("ga", "catalog sales", "USE_CATALOG", "USE_SCHEMA")
        .allow("gb", "catalog sales", "USE_CATALOG", "USE_SCHEMA")
    )
    backend = backend_for(ranger_standin, retries=0)
    reconcile(backend, world.model, ALL)
    res = {"database": "crm", "table": "orders", "column": "id"}
    assert not ranger_standin.is_access_allowed("hive", res, "select", "c")
    world.grant_role("reader", users=["c"])
    plan = planner.plan(backend, world.model, ALL)
    assert [op.action for op in plan.ops] == ["change", "change"]
    assert "policy" in str(plan.ops[0].fact) and "role" in str(plan.ops[1].fact)  # the role last

    def refuse(*args: object, **kwargs: object) -> None:
        raise BackendError("rg", "Ranger refused update policy (HTTP 400): refused")

    monkeypatch.setattr(backend.api, "update_policy", refuse)
    with pytest.raises(BackendError):
        reconcile(backend, world.model, ALL, retries=0)
    assert not ranger_standin.is_access_allowed("hive", res, "select", "c")  # never wider
    monkeypatch.undo()
    reconcile(backend, world.model, ALL)
    assert not ranger_standin.is_access_allowed("hive", res, "select", "c")
    assert ranger_standin.is_access_allowed("hive", res, "select", "a")
    assert planner.plan(backend, world.model, ALL).empty


def test_a_role_change_that_adds_and_removes_members_is_narrowed_first(ranger_standin: Standin) -> None:
    world = sales()
    backend = backend_for(ranger_standin)
    reconcile(backend, world.model, ALL)
    world.grant_role("reader", users=["carol"])
    do(world, ch.revoke_role(world.model, "reader", Principal.user("bob")))
    ranger_standin.reset_log()
    reconcile(backend, world.model, ALL)
    rid = next(r["id"] for r in ranger_standin.store.list_roles({}) if r["name"] == "pd_reader")
    puts = [r for r in writes(ranger_standin) if r[0] == "PUT" and r[1].endswith(f"/roles/{rid}")]
    assert len(puts) == 2  # the members kept, then the full change after the policies
    assert planner.plan(backend, world.model, ALL).empty


def test_dropping_the_last_table_in_a_scoped_sync_leaves_no_stale_hive_policy(
    ranger_standin: Standin,
) -> None:
    """The catalog then holds only a topic: it is no Hive catalog any more, and the policies
    of its other databases go too, though the scope named one table only."""
    world = (
        Builder()
        .users("u")
        .catalog("c", backend="rg")
        .schema("c.s1")
        .schema("c.s2")
        .table("c.s2.b")
        .create("topic c.s1.events")
        .role("r", users=["u"])
        .allow("r", "catalog c", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
    )
    backend = backend_for(ranger_standin)
    reconcile(backend, world.model, ALL)
    assert any(p["service"] == "hive" for p in ranger_standin.store.list_policies({}))
    events = ch.drop_object(world.model, ObjectRef.parse("table c.s2.b"))
    do(world, events)
    reconcile(backend, world.model, Scope.union(scope_of(e) for e in events))
    assert planner.plan(backend, world.model, ALL).empty
    assert not any(p["service"] == "hive" for p in ranger_standin.store.list_policies({}))


def test_a_scoped_sync_keeps_a_per_user_role_another_database_still_names(ranger_standin: Standin) -> None:
    """carol owns a table in two databases (her per-user role is named in both); a sync
    scoped to one database where she no longer owns anything keeps her role: the other
    database's policies name it (the compile asks the read index for the per-user roles
    the policies outside its focus name)."""
    world = (
        sales()
        .schema("sales.hr")
        .table("sales.crm.notes", owner="carol")
        .table("sales.hr.pay", owner="carol")
        .role("gate", users=["carol", "bob"])
        .allow("gate", "catalog sales", "USE_CATALOG", "USE_SCHEMA")
    )
    backend = backend_for(ranger_standin)
    reconcile(backend, world.model, ALL)
    role = backend.naming.user_role("carol")
    assert role in {r["name"] for r in ranger_standin.store.list_roles({})}
    events = ch.set_owner(world.model, ObjectRef.parse("table sales.hr.pay"), "alice")
    do(world, events)
    plan, applied = reconcile(backend, world.model, Scope.union(scope_of(e) for e in events))
    assert applied and not any(op.key == ("role", role) for op in plan.ops), plan.render()
    assert role in {r["name"] for r in ranger_standin.store.list_roles({})}
    assert planner.plan(backend, world.model, ALL).empty
