"""Wider answers of the Ranger backend found by reading it against issue 16's kinds: pushdown's
own settings changed between syncs, hand-made state on resources pushdown does not write
itself, hand-edited roles, names. After each, the stand-in's engine is never wider than the
evaluator, or a finding says what pushdown left alone."""

from __future__ import annotations

from typing import Any

import pytest
from pushdown_lab.ranger_standin import Standin

from pushdown.model import changes
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from tests.builders import Builder

from .probe import _asker, probe
from .world import backend_for, sales

pytestmark = pytest.mark.ranger
ALL = Scope.everything()
USERS = ("alice", "bob", "carol", "stranger")


def world() -> Builder:
    """bob and alice (group analysts) read every table of crm; reader's DENY on orders."""
    return (
        sales()
        .schema("sales.ops")
        .table("sales.ops.runs")
        .deny("reader", "table sales.crm.orders", "SELECT_TABLE")
    )


def raw_and_pii(raw: str, pii: str) -> Builder:
    """:func:`sales` with fileset ``raw`` at ``raw``, which ``reader`` may read (READ_FILESET
    on the catalog), and fileset ``pii`` at ``pii``, where ``reader`` is DENIED it."""
    return (
        sales()
        .create("fileset sales.crm.raw", properties={"location": raw})
        .create("fileset sales.crm.pii", properties={"location": pii})
        .allow("reader", "catalog sales", "READ_FILESET")
        .deny("reader", "fileset sales.crm.pii", "READ_FILESET")
    )


def wider(standin: Standin, b: Builder, **kw: Any) -> list[Any]:
    return probe(standin, b.model, "sales", USERS, **kw).wider


def hand_policy(
    standin: Standin, resources: dict[str, Any], service: str = "hive", **extra: Any
) -> dict[str, Any]:
    policy = {
        "service": service,
        "name": "hand " + ",".join(f"{k}={v['values'][0]}" for k, v in sorted(resources.items())),
        "resources": resources,
        "policyItems": [{"users": ["zed"], "accesses": [{"type": "select", "isAllowed": True}]}],
        **extra,
    }
    return standin.store.create_policy(policy)


def revoke_all(b: Builder) -> None:
    b.revoke("reader", "catalog sales", ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"])


# -- 1. pushdown's own settings changed between syncs -----------------------------------------


@pytest.mark.parametrize(
    "settings",
    [{"role_prefix": "px_", "user_role_prefix": "pxu_"}, {"role_prefix": "pd2_"}],
    ids=["both-prefixes", "role-prefix"],
)
def test_changed_role_prefix_old_items_are_reported(
    ranger_standin: Standin, settings: dict[str, str]
) -> None:
    """pushdown synced with ``pd_``; its settings now say another prefix. The old ``pd_reader``
    role and the items naming it (in pushdown's own labelled policies) are no longer pushdown's.
    The model then revokes reader's allows: the old items keep granting (wider), left alone
    by design and reported as a hand-made allow reaching model users through ``pd_reader``."""
    b = world()
    reconcile(backend_for(ranger_standin), b.model, ALL)
    revoke_all(b)
    plan, _ = reconcile(backend_for(ranger_standin, None, **settings), b.model, ALL)
    assert wider(ranger_standin, b)
    assert any("role pd_reader" in f and "outside pushdown" in f for f in plan.findings)


@pytest.mark.parametrize("setting", ["hive_service", "hdfs_service", "kafka_service"])
def test_changed_service_name_leaves_no_unreported_grant(ranger_standin: Standin, setting: str) -> None:
    """pushdown wrote its policies in service ``hive`` (``hdfs``, ``kafka``); its settings now
    name another service of the same type (the old one still exists, its plugin may still
    enforce it). The model then revokes reader's allows: pushdown's labelled policies in the
    old service keep granting, and no finding says so (only the services the current
    settings name are read)."""
    kind = setting.split("_")[0]
    b = (
        world()
        .create("topic sales.crm.events")
        .create("fileset sales.crm.raw", properties={"location": "/lake/raw"})
        .allow("reader", "catalog sales", "CONSUME_TOPIC", "READ_FILESET")
    )
    reconcile(backend_for(ranger_standin), b.model, ALL)
    ranger_standin.create_service(f"{kind}2", kind)
    revoke_all(b)
    b.revoke("reader", "catalog sales", ["CONSUME_TOPIC", "READ_FILESET"])
    plan, _ = reconcile(backend_for(ranger_standin, None, **{setting: f"{kind}2"}), b.model, ALL)
    found = [f for f in plan.findings if f"{kind}2" not in f and f"{kind}" in f]
    assert wider(ranger_standin, b) == [] or found, wider(ranger_standin, b)[:3]


def test_deny_items_setting_off_between_syncs_is_never_wider(ranger_standin: Standin) -> None:
    """``deny_items`` turned to ``off`` after a sync with deny items: the compile must take
    the DENY on orders into per-table allows, not drop the deny item and keep the wildcard."""
    b = world()
    reconcile(backend_for(ranger_standin), b.model, ALL)
    reconcile(backend_for(ranger_standin, deny_items="off"), b.model, ALL)
    assert wider(ranger_standin, b) == []


def test_name_mapping_changed_between_syncs_is_never_wider(ranger_standin: Standin) -> None:
    """``alice`` -> ``alice@CORP`` -> ``alice`` between syncs, and bob's role revoked in between:
    the memberships of the old names must not stay."""
    b = world()
    realm = lambda p: f"{p.name}@CORP" if p.kind.name == "USER" else p.name  # noqa: E731
    reconcile(backend_for(ranger_standin), b.model, ALL)
    reconcile(backend_for(ranger_standin, realm), b.model, ALL)
    revoke_all(b)
    reconcile(backend_for(ranger_standin), b.model, ALL)
    assert wider(ranger_standin, b) == []
    assert wider(ranger_standin, b, mapped=lambda u: f"{u}@CORP") == []


# -- 2. override priority on resources pushdown does not write itself --------------------------


@pytest.mark.parametrize(
    "resources",
    [
        {"database": {"values": ["crm"]}, "table": {"values": ["ord*"]}, "column": {"values": ["*"]}},
        {"database": {"values": ["*"]}, "table": {"values": ["orders"]}, "column": {"values": ["*"]}},
        {"database": {"values": ["crm", "ops"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
        {
            "database": {"values": ["crm"]},
            "table": {"values": ["orders", "leads"]},
            "column": {"values": ["*"]},
        },
        {"database": {"values": ["crm"]}, "table": {"values": ["orders"]}},
        {
            "database": {"values": ["crm"]},
            "table": {"values": ["leads"], "isExcludes": True},
            "column": {"values": ["*"]},
        },
    ],
    ids=["table-wildcard", "database-wildcard", "two-databases", "two-tables", "no-column", "excludes"],
)
def test_override_policy_on_a_wider_resource_set_voids_the_deny(
    ranger_standin: Standin, resources: dict[str, Any]
) -> None:
    """A hand-made policy with override priority (``policyPriority=1``) on a resource set wider
    than pushdown's (``table=ord*``, ``database=*``, two databases) allows select to ``etl``, a
    group the model does not know and the enforcing host puts bob in. Ranger: an override allow
    beats every normal-priority deny item, so reader's DENY on orders is void for bob. On one of
    pushdown's own resource sets this voids the database's deny items (handled, test_r5); on a
    wider set nothing is relied on less and no finding names it."""
    b = world()
    backend = backend_for(ranger_standin)
    item = [{"groups": ["etl"], "accesses": [{"type": "select", "isAllowed": True}]}]
    policy = hand_policy(ranger_standin, resources, policyPriority=1, policyItems=item)
    plan, _ = reconcile(backend, b.model, ALL)
    groups = lambda u: sorted(b.model.user_groups.get(u, ())) + (["etl"] if u == "bob" else [])  # noqa: E731
    found = [f for f in plan.findings if str(policy["name"]) in f]
    assert wider(ranger_standin, b, groups_of=groups) == [] or found


def test_override_policy_on_one_column_voids_the_deny_on_that_column(ranger_standin: Standin) -> None:
    """The override policy on ``database=crm, table=orders, column=id`` for the host's group
    ``etl`` (bob in it): ``SELECT id FROM crm.orders`` is a column-level request, which the
    override allow decides before reader's deny item on ``column=*``. The model denies bob
    every column of orders. (The probe asks at table level only; this asks the column.)"""
    b = world()
    backend = backend_for(ranger_standin)
    resources = {
        "database": {"values": ["crm"]},
        "table": {"values": ["orders"]},
        "column": {"values": ["id"]},
    }
    item = [{"groups": ["etl"], "accesses": [{"type": "select", "isAllowed": True}]}]
    policy = hand_policy(ranger_standin, resources, policyPriority=1, policyItems=item)
    plan, _ = reconcile(backend, b.model, ALL)
    ask = _asker(ranger_standin)
    column = {"database": "crm", "table": "orders", "column": "id"}
    allowed = ask("hive", column, "select", "bob", ["etl"])
    assert not allowed or any(str(policy["name"]) in f for f in plan.findings)


def test_override_policy_for_a_model_user_on_a_wider_resource_set_is_reported(
    ranger_standin: Standin,
) -> None:
    """The same override policy allowing bob by name: it beats reader's DENY (wider), and is
    reported as a hand-made allow reaching a model user (by design: left alone, reported)."""
    b = world()
    backend = backend_for(ranger_standin)
    resources = {"database": {"values": ["*"]}, "table": {"values": ["ord*"]}, "column": {"values": ["*"]}}
    item = [{"users": ["bob"], "accesses": [{"type": "select", "isAllowed": True}]}]
    hand_policy(ranger_standin, resources, policyPriority=1, policyItems=item)
    plan, _ = reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b)
    assert any("user bob" in f and "outside pushdown" in f for f in plan.findings)


def test_normal_policy_on_a_wider_resource_set_loses_to_the_deny(ranger_standin: Standin) -> None:
    """A normal-priority hand-made allow on ``database=*, table=*`` for the host's group ``etl``
    (bob in it): pushdown's deny item on orders wins (deny beats allow at one priority)."""
    b = world()
    backend = backend_for(ranger_standin)
    resources = {"database": {"values": ["*"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}}
    hand_policy(
        ranger_standin, resources, policyItems=[{"groups": ["etl"], "accesses": [{"type": "select"}]}]
    )
    reconcile(backend, b.model, ALL)
    groups = lambda u: sorted(b.model.user_groups.get(u, ())) + (["etl"] if u == "bob" else [])  # noqa: E731
    assert [w for w in wider(ranger_standin, b, groups_of=groups) if "orders" in w[2]] == []


# -- 4. pushdown's roles edited by hand --------------------------------------------------------


@pytest.mark.parametrize(
    "member",
    [
        {"groups": [{"name": "etl", "isAdmin": False}]},
        {"users": [{"name": "carol", "isAdmin": True}]},
        {"users": [{"name": "CAROL", "isAdmin": False}]},
    ],
    ids=["group", "admin-user", "case-user"],
)
def test_a_member_added_by_hand_to_pushdowns_role_is_removed(
    ranger_standin: Standin, member: dict[str, Any]
) -> None:
    """A group ``etl`` (host puts carol in it), or carol as an admin member, added by hand to
    ``pd_reader``: carol gets reader's allows. The next sync must take it out."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    store = ranger_standin.store
    role = dict(store.role_by_name("pd_reader"))
    for kind, extra in member.items():
        role[kind] = [*(role.get(kind) or []), *extra]
    store.update_role(store.role_id("pd_reader"), role)
    reconcile(backend, b.model, ALL)
    groups = lambda u: sorted(b.model.user_groups.get(u, ())) + (["etl"] if u == "carol" else [])  # noqa: E731
    assert wider(ranger_standin, b, groups_of=groups) == []


def test_a_hand_made_role_named_like_pushdowns_but_for_case(ranger_standin: Standin) -> None:
    """``PD_reader`` made by hand holding carol, named in a hand-made allow on crm: not
    pushdown's (the prefix is case-sensitive); it must be reported as reaching carol."""
    b = world()
    store = ranger_standin.store
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    try:
        store.create_role({"name": "PD_reader", "users": [{"name": "carol", "isAdmin": False}]})
    except Exception as exc:  # Ranger's role names are unique ignoring case
        pytest.skip(f"refused: {exc}")
    resources = {"database": {"values": ["ops"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}}
    hand_policy(
        ranger_standin, resources, policyItems=[{"roles": ["PD_reader"], "accesses": [{"type": "select"}]}]
    )
    plan, _ = reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == [] or any("PD_reader" in f for f in plan.findings)


# -- 6. names ----------------------------------------------------------------------------------


def test_two_filesets_on_one_path_of_two_clusters(ranger_standin: Standin) -> None:
    """Two filesets with the same path on two name nodes (``hdfs://nn1/lake/raw``,
    ``hdfs://nn2:8020/lake/raw/``): one HDFS service, one ``path=/lake/raw``. bob may read only
    the first; the policy must not let him read what the second holds (the model denies it)."""
    b = (
        sales()
        .create("fileset sales.crm.a", properties={"location": "hdfs://nn1/lake/raw"})
        .create("fileset sales.crm.b", properties={"location": "hdfs://nn2:8020//lake/raw/"})
        .role("fs", users=["carol"])
        .allow("fs", "fileset sales.crm.a", "READ_FILESET")
    )
    reconcile(backend_for(ranger_standin), b.model, ALL)
    assert wider(ranger_standin, b) == []


def test_a_removed_users_hand_made_allow_stays_reported(ranger_standin: Standin) -> None:
    """dave is a model user with a hand-made allow on crm.leads (reported). dave is removed
    from the model; Ranger still allows him (the probe asks removed users too), and the
    finding disappears: the access path is forgotten while it still works."""
    b = world().users("dave")
    backend = backend_for(ranger_standin)
    resources = {"database": {"values": ["crm"]}, "table": {"values": ["leads"]}, "column": {"values": ["*"]}}
    hand_policy(
        ranger_standin, resources, policyItems=[{"users": ["dave"], "accesses": [{"type": "select"}]}]
    )
    plan, _ = reconcile(backend, b.model, ALL)
    assert any("user dave" in f for f in plan.findings)
    b.do(changes.remove_user, "dave")
    plan, _ = reconcile(backend, b.model, ALL)
    users = (*USERS, "dave")
    assert probe(ranger_standin, b.model, "sales", users).wider == [] or any(
        "dave" in f for f in plan.findings
    )


# -- 5. tag services ---------------------------------------------------------------------------


def test_a_tag_service_linked_to_the_hive_service_is_reported(ranger_standin: Standin) -> None:
    """The Hive service links a tag service (``tagService``): Ranger evaluates tag-based
    policies first (a tag allow for a model user, or a tag policy with override priority,
    reaches tables whatever pushdown writes). The stand-in has no tag engine, so the access
    itself cannot be probed here; what pushdown must do is say it relies on no tag policy
    it cannot read: a finding naming the tag service."""
    b = world()
    backend = backend_for(ranger_standin)
    store = ranger_standin.store
    svc = store.service("hive")
    svc["tagService"] = "cl1_tag"
    with store.lock:
        store.services["hive"] = svc
    plan, _ = reconcile(backend, b.model, ALL)
    assert any("cl1_tag" in f or "tag service" in f for f in plan.findings)


# -- 2b. a DENY on a topic or fileset against a hand-made allow ------------------------------


@pytest.mark.parametrize(
    ("obj", "service", "resources", "access"),
    [
        ("topic sales.crm.events", "kafka", {"topic": {"values": ["*"]}}, "consume"),
        ("fileset sales.crm.raw", "hdfs", {"path": {"values": ["/lake"], "isRecursive": True}}, "read"),
    ],
    ids=["topic", "fileset"],
)
def test_a_deny_on_a_topic_or_fileset_beats_a_hand_made_allow_for_a_host_group(
    ranger_standin: Standin, obj: str, service: str, resources: dict[str, Any], access: str
) -> None:
    """reader is DENIED ``obj`` (bob holds reader). A hand-made, normal-priority allow on a
    wider resource (``topic=*``, ``path=/lake`` recursive) names ``etl``, a group the model
    does not know and the enforcing host puts bob in. In Hive pushdown's deny item wins
    (test_normal_policy_on_a_wider_resource_set_loses_to_the_deny); for topics and filesets
    the DENY is written as the absence of an allow, so the hand-made allow reaches bob, and
    no finding names it (the group is not the model's)."""
    b = (
        world()
        .create("topic sales.crm.events")
        .create("fileset sales.crm.raw", properties={"location": "/lake/raw"})
        .allow("reader", "catalog sales", "CONSUME_TOPIC", "READ_FILESET")
        .deny("reader", obj, "CONSUME_TOPIC" if service == "kafka" else "READ_FILESET")
    )
    backend = backend_for(ranger_standin)
    item = [{"groups": ["etl"], "accesses": [{"type": access}]}]
    policy = hand_policy(ranger_standin, resources, service=service, policyItems=item)
    plan, _ = reconcile(backend, b.model, ALL)
    groups = lambda u: sorted(b.model.user_groups.get(u, ())) + (["etl"] if u == "bob" else [])  # noqa: E731
    bad = [w for w in wider(ranger_standin, b, groups_of=groups) if w[2] == obj]
    assert bad == [] or any(str(policy["name"]) in f for f in plan.findings), bad


# -- 5b. service configuration changed underneath ------------------------------------------------


@pytest.mark.parametrize(
    "configs",
    [{"ranger.plugin.super.users": "zed,bob"}, {"ranger.plugin.super.groups": "analysts"}],
    ids=["super-users", "super-groups"],
)
def test_super_users_in_a_service_config_are_reported(
    ranger_standin: Standin, configs: dict[str, str]
) -> None:
    """Somebody lists a model user (bob) or group (analysts) as *Superusers* in the Hive
    service's configs. Ranger's policy engine reads ``ranger.plugin.super.users|groups``
    from the service instance config (RangerPolicyEngineImpl.ServiceConfig) and allows them
    everything, reader's DENY on orders included. The stand-in's server does not apply
    service-config super users (its engine supports them only from vector files), so the
    access is not probed; pushdown must at least report it."""
    b = world()
    backend = backend_for(ranger_standin)
    store = ranger_standin.store
    with store.lock:
        store.services["hive"].setdefault("configs", {}).update(configs)
    plan, _ = reconcile(backend, b.model, ALL)
    assert any("super" in f.lower() for f in plan.findings)


# -- more hand-made state and names ---------------------------------------------------------------


@pytest.mark.parametrize(
    "edit",
    [
        {"denyExceptions": [{"users": ["bob"], "accesses": [{"type": "select", "isAllowed": True}]}]},
        {"policyPriority": 1},
        {"isEnabled": False},
    ],
    ids=["deny-exception", "override", "disabled"],
)
def test_pushdowns_own_deny_policy_edited_by_hand(ranger_standin: Standin, edit: dict[str, Any]) -> None:
    """Somebody edits pushdown's own policy holding the deny item on orders: a deny exception
    for bob, override priority, or disabled. The DENY must still hold for bob after the next
    sync, or a finding must say it does not."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    store = ranger_standin.store
    mine = [p for p in store.list_policies({"serviceName": "hive"}) if p.get("denyPolicyItems")]
    assert mine
    for policy in mine:
        store.update_policy(policy["id"], {**policy, **edit})
    plan, _ = reconcile(backend, b.model, ALL)
    names = [str(p["name"]) for p in mine]
    assert wider(ranger_standin, b) == [] or any(n in f for n in names for f in plan.findings)


@pytest.mark.parametrize(
    "name",
    ["ordérs", "o" * 120, "a-b", "a_b", "Orders"],
    ids=["unicode", "long", "dash", "underscore", "capital"],
)
def test_a_deny_on_an_unusual_table_name_holds(ranger_standin: Standin, name: str) -> None:
    """reader reads every table of crm and is DENIED ``crm.<name>`` (registered): the deny
    item must reach the table Hive holds under that name."""
    b = sales().table(f"sales.crm.{name}").deny("reader", f"table sales.crm.{name}", "SELECT_TABLE")
    reconcile(backend_for(ranger_standin), b.model, ALL)
    assert wider(ranger_standin, b) == []


def test_a_fileset_whose_path_prefixes_another_does_not_enclose_it(ranger_standin: Standin) -> None:
    """Filesets at ``/lake/raw`` (bob may read) and ``/lake/raw2`` (reader DENIED): a
    recursive ``path=/lake/raw`` must not reach ``/lake/raw2``."""
    b = (
        sales()
        .create("fileset sales.crm.raw", properties={"location": "/lake/raw"})
        .create("fileset sales.crm.raw2", properties={"location": "hdfs://nn:8020/lake/raw2/"})
        .allow("reader", "fileset sales.crm.raw", "READ_FILESET")
        .deny("reader", "fileset sales.crm.raw2", "READ_FILESET")
    )
    reconcile(backend_for(ranger_standin), b.model, ALL)
    assert wider(ranger_standin, b) == []


def test_a_new_empty_catalog_does_not_drop_the_hive_catalogs_deny_items(ranger_standin: Standin) -> None:
    """pushdown enforces ``sales`` (tables) in service ``hive``; a hand-made normal-priority
    allow on ``database=*, table=*`` names ``etl``, a group the host puts bob in, and
    pushdown's deny item on orders beats it (reader's DENY holds). Then somebody adds an empty
    catalog ``aaa`` on the same backend: ``hive_catalog`` now picks ``aaa`` (first by name,
    no topics or filesets), so ``sales`` is "not pushed (narrower)" and every policy of it
    goes, deny items included. The hand-made allow then reaches bob's orders: wider, while
    the note says narrower."""
    b = world()
    backend = backend_for(ranger_standin)
    resources = {"database": {"values": ["*"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}}
    item = [{"groups": ["etl"], "accesses": [{"type": "select"}]}]
    hand_policy(ranger_standin, resources, policyItems=item)
    groups = lambda u: sorted(b.model.user_groups.get(u, ())) + (["etl"] if u == "bob" else [])  # noqa: E731
    reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b, groups_of=groups) == []
    b.catalog("aaa", backend="rg")
    reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b, groups_of=groups) == []


@pytest.mark.parametrize(
    ("service", "resources", "access", "extra"),
    [
        ("kafka", {"topic": {"values": ["*"]}}, "consume", {}),
        ("hdfs", {"path": {"values": ["/"], "isRecursive": True}}, "read", {}),
        (
            "hive",
            {"database": {"values": ["*"]}, "table": {"values": ["ord*"]}},
            "select",
            {"policyPriority": 1},
        ),
    ],
    ids=["kafka-all-topics", "hdfs-root", "hive-override"],
)
def test_a_hand_made_allow_naming_pushdowns_role_on_a_wider_resource(
    ranger_standin: Standin, service: str, resources: dict[str, Any], access: str, extra: dict[str, Any]
) -> None:
    """A hand-made allow item names ``pd_reader`` on a resource pushdown never writes
    (every topic, the HDFS root, an override on ``ord*`` tables): reader's members would get
    what the model does not give them (reader is DENIED orders, has no topic or fileset
    grant). Taken out or reported."""
    b = (
        world()
        .create("topic sales.crm.events")
        .create("fileset sales.crm.raw", properties={"location": "/lake/raw"})
    )
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    item = [{"roles": ["pd_reader"], "accesses": [{"type": access}]}]
    policy = hand_policy(ranger_standin, resources, service=service, policyItems=item, **extra)
    plan, _ = reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == [] or any(str(policy["name"]) in f for f in plan.findings)


def test_the_hdfs_deny_option_turned_off_under_nested_filesets(ranger_standin: Standin) -> None:
    """Nested filesets ``/lake/raw`` (reader may read) and ``/lake/raw/pii`` (reader DENIED):
    the child's deny items carry the DENY. The HDFS service definition's deny option is
    turned off while running: the next sync must not keep the parent's recursive allow."""
    b = raw_and_pii("/lake/raw", "/lake/raw/pii")
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == []
    sdef = ranger_standin.store.service_def("hdfs")
    sdef.setdefault("options", {})["enableDenyAndExceptionsInPolicies"] = "false"
    ranger_standin.store.update_service_def("hdfs", sdef)
    reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == []


def _edit_items(standin: Standin, field: str, edit: Any) -> list[str]:
    store = standin.store
    names = []
    for policy in store.list_policies({"serviceName": "hive"}):
        items = policy.get(field) or []
        if items:
            policy[field] = [edit(dict(item)) for item in items]
            store.update_policy(policy["id"], policy, checked=False)  # stored: an older Ranger's too
            names.append(str(policy["name"]))
    return names


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("policyItems", {"accesses": [{"type": "all", "isAllowed": True}]}),
        ("policyItems", {"delegateAdmin": True}),
        ("denyPolicyItems", {"delegateAdmin": True}),
        ("denyPolicyItems", {"accesses": []}),
    ],
    ids=["allow-all", "allow-delegate", "deny-delegate", "deny-no-access"],
)
def test_pushdowns_items_edited_by_hand(ranger_standin: Standin, field: str, change: dict[str, Any]) -> None:
    """Somebody edits pushdown's own items: an allow item now grants ``all`` (every Hive
    access), or has delegated admin; a deny item gets a condition (it holds only from some
    addresses), delegated admin, or loses its accesses. The next sync restores the model, or
    a finding names the policy."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    names = _edit_items(ranger_standin, field, lambda item: {**item, **change})
    assert names
    plan, _ = reconcile(backend, b.model, ALL)
    bad = wider(ranger_standin, b)
    assert bad == [] or any(n in f for n in names for f in plan.findings), bad[:3]


def test_pushdowns_deny_item_given_a_condition_by_hand(ranger_standin: Standin) -> None:
    """Somebody adds a condition (``ip-range``) to pushdown's deny item on orders: Ranger then
    denies only requests from those addresses. The stand-in's engine has no item conditions,
    so this checks the policy itself: after the next sync a plain deny item (no conditions)
    names pushdown's role for ``select`` on orders again, or a finding names the policy."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    cond = {"conditions": [{"type": "ip-range", "values": ["10.0.0.0/8"]}]}
    names = _edit_items(ranger_standin, "denyPolicyItems", lambda item: {**item, **cond})
    assert names
    plan, _ = reconcile(backend, b.model, ALL)
    plain = [
        item
        for p in ranger_standin.store.list_policies({"serviceName": "hive"})
        if "orders" in str(p["resources"])
        for item in p.get("denyPolicyItems") or ()
        if not item.get("conditions") and any(a.get("type") == "select" for a in item.get("accesses") or ())
    ]
    assert plain or any(n in f for n in names for f in plan.findings)


def test_a_percent_encoded_location_is_the_path_hdfs_holds(ranger_standin: Standin) -> None:
    """Fileset ``raw`` at ``/lake/a b`` (reader may read) and fileset ``pii`` at the URI
    ``hdfs://nn:8020/lake/a%20b/pii`` (reader DENIED): as a URI the latter is the HDFS path
    ``/lake/a b/pii``, inside ``raw``. pushdown keeps ``%20`` literally, so the nesting is
    missed: the recursive allow on ``/lake/a b`` reaches ``/lake/a b/pii`` with no deny item
    (the probe asks the literal path, so this asks the decoded one)."""
    b = raw_and_pii("/lake/a b", "hdfs://nn:8020/lake/a%20b/pii")
    reconcile(backend_for(ranger_standin), b.model, ALL)
    ask = _asker(ranger_standin)
    assert not ask("hdfs", {"path": "/lake/a b/pii"}, "read", "bob", [])


@pytest.mark.parametrize(
    "location",
    ["/lake/raw/./pii", "hdfs://nn:8020/lake/tmp/../raw/pii"],
    ids=["dot", "dotdot"],
)
def test_a_denied_fileset_pushdown_cannot_name_inside_an_allowed_one(
    ranger_standin: Standin, location: str
) -> None:
    """Fileset ``raw`` at ``/lake/raw`` (reader may read) and fileset ``pii`` whose location
    pushdown refuses to name (``.`` or ``..`` segments) but which is ``/lake/raw/pii`` on HDFS
    (reader DENIED). "Gets nothing" only drops pii's own items: the recursive allow on
    ``/lake/raw`` still reaches it. The probe skips a fileset without a path, so this asks
    the path HDFS resolves."""
    b = raw_and_pii("/lake/raw", location)
    reconcile(backend_for(ranger_standin), b.model, ALL)
    ask = _asker(ranger_standin)
    assert not ask("hdfs", {"path": "/lake/raw/pii"}, "read", "bob", [])


@pytest.mark.parametrize(
    "location", ["/lake/raw/p*i", "hdfs://nn/lake/raw/{USER}"], ids=["wildcard", "token"]
)
def test_a_location_ranger_cannot_name_withholds_the_enclosing_allow(
    ranger_standin: Standin, location: str
) -> None:
    """Fileset ``pii`` at a location Ranger cannot name (a ``*``, a token) inside ``raw`` at
    ``/lake/raw`` (reader may read; reader DENIED pii): pii gets no policy, so the recursive
    allow on ``/lake/raw`` must not reach it: it goes only to the users allowed both."""
    b = raw_and_pii("/lake/raw", location)
    plan, _ = reconcile(backend_for(ranger_standin), b.model, ALL)
    ask = _asker(ranger_standin)
    literal = location.removeprefix("hdfs://nn")
    assert not ask("hdfs", {"path": literal}, "read", "bob", [])
    assert any("cannot be named" in n for n in plan.notes)


# -- administration handed out by hand ---------------------------------------------------------


def _delegated(standin: Standin, field: str) -> list[dict[str, Any]]:
    """The ``field`` items with delegated admin that name one of pushdown's roles."""
    return [
        item
        for p in standin.store.list_policies({"serviceName": "hive"})
        for item in p.get(field) or ()
        if item.get("delegateAdmin") and any(str(r).startswith("pd") for r in item.get("roles") or ())
    ]


def test_delegated_admin_on_pushdowns_allow_item_is_taken_out_and_reported(ranger_standin: Standin) -> None:
    """Somebody ticks *delegate admin* on pushdown's allow item for ``pd_reader``: every member
    (bob, alice) may now edit the policy through Ranger (grant themselves or others anything
    on crm). The engine's answers do not change yet. The next sync reports it and takes
    pushdown's role out of that item (its plain item written again), and the one after
    has nothing left to do; the model then revokes reader's grants and nothing of them stays."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    names = _edit_items(ranger_standin, "policyItems", lambda item: {**item, "delegateAdmin": True})
    assert names and _delegated(ranger_standin, "policyItems")
    plan, _ = reconcile(backend, b.model, ALL)
    assert _delegated(ranger_standin, "policyItems") == []
    assert any(n in f and "delegated admin" in f for n in names for f in plan.findings)
    assert wider(ranger_standin, b) == []
    again, _ = reconcile(backend, b.model, ALL)
    assert again.empty and not any("delegated admin" in f for f in again.findings)
    revoke_all(b)
    reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == []


@pytest.mark.parametrize("change", ["revoke", "delete-role"])
def test_delegated_admin_on_an_allow_item_then_the_grant_revoked_before_a_sync(
    ranger_standin: Standin, change: str
) -> None:
    """Delegated admin ticked on pushdown's allow items, and the model revokes reader's grants
    (or deletes role reader) before pushdown syncs again: no plain item of reader's is left
    to diff, yet the marked one is read, so the sync still takes pushdown's role out of it
    (bob and alice keep no select on crm through it), and Ranger deletes ``pd_reader`` (no
    item names it any more)."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    assert _edit_items(ranger_standin, "policyItems", lambda item: {**item, "delegateAdmin": True})
    if change == "revoke":
        revoke_all(b)
    else:
        b.do(changes.delete_role, "reader")
    reconcile(backend, b.model, ALL)
    assert _delegated(ranger_standin, "policyItems") == []
    assert wider(ranger_standin, b) == []
    assert (ranger_standin.store.list_roles({"roleName": "pd_reader"}) == []) is (change == "delete-role")


def test_delegated_admin_on_pushdowns_deny_item_keeps_the_deny_and_loses_the_admin(
    ranger_standin: Standin,
) -> None:
    """Delegated admin ticked on pushdown's deny item (reader DENIED orders): taking pushdown's
    role out of a deny item would widen, so the item stays; it names nobody but pushdown's
    role, so the sync clears its delegated admin (narrower) and reports it. The DENY holds."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    names = _edit_items(ranger_standin, "denyPolicyItems", lambda item: {**item, "delegateAdmin": True})
    assert names and _delegated(ranger_standin, "denyPolicyItems")
    plan, _ = reconcile(backend, b.model, ALL)
    assert _delegated(ranger_standin, "denyPolicyItems") == []
    assert any(n in f and "denyPolicyItems" in f for n in names for f in plan.findings)
    assert wider(ranger_standin, b) == []
    assert reconcile(backend, b.model, ALL)[0].empty


def _add_item(standin: Standin, field: str, item: dict[str, Any]) -> list[str]:
    """``item`` added to the ``field`` items of every Hive policy that has some (as found in
    Ranger's database: an item today's Ranger refuses may have been stored by an older one)."""
    store = standin.store
    names = []
    for policy in store.list_policies({"serviceName": "hive"}):
        if policy.get(field):
            store.update_policy(policy["id"], {**policy, field: [*policy[field], item]}, checked=False)
            names.append(str(policy["name"]))
    return names


@pytest.mark.parametrize(
    "accesses",
    [[], [{"type": "select", "isAllowed": False}]],
    ids=["no-access", "access-not-allowed"],
)
def test_delegated_admin_alone_in_an_allow_item_for_pushdowns_role_is_taken_out(
    ranger_standin: Standin, accesses: list[dict[str, Any]]
) -> None:
    """Somebody adds to pushdown's policies an allow item for ``pd_reader`` with delegated admin
    and no allowed access (Ranger accepts an item without accesses when it has delegated
    admin): it allows no access, but every member of reader (bob, alice) may edit the policy.
    The next sync reports it and takes pushdown's role out of it (the item goes: it named
    nobody else); the one after has nothing left to do."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    item = {"roles": ["pd_reader"], "accesses": accesses, "delegateAdmin": True}
    names = _add_item(ranger_standin, "policyItems", item)
    assert names and _delegated(ranger_standin, "policyItems")
    plan, _ = reconcile(backend, b.model, ALL)
    assert not plan.empty
    assert any(n in f and "delegated admin" in f for n in names for f in plan.findings)
    assert _delegated(ranger_standin, "policyItems") == []
    assert wider(ranger_standin, b) == []
    again, _ = reconcile(backend, b.model, ALL)
    assert again.empty and not any("delegated admin" in f for f in again.findings)


def test_a_copy_of_pushdowns_deny_item_with_delegated_admin_loses_the_admin(ranger_standin: Standin) -> None:
    """Somebody adds a copy of pushdown's deny item (reader DENIED orders) with delegated admin:
    no plain item of pushdown's changed, yet bob and alice may now edit the policy. The next
    sync clears its delegated admin (the deny stays; one deny item is left, pushdown's) and
    reports it; the one after has nothing left to do, and the DENY holds."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    (policy,) = [
        p for p in ranger_standin.store.list_policies({"serviceName": "hive"}) if p["denyPolicyItems"]
    ]
    names = _add_item(
        ranger_standin, "denyPolicyItems", {**policy["denyPolicyItems"][0], "delegateAdmin": True}
    )
    assert names and _delegated(ranger_standin, "denyPolicyItems")
    plan, _ = reconcile(backend, b.model, ALL)
    assert not plan.empty
    assert any(n in f and "delegated admin" in f for n in names for f in plan.findings)
    assert _delegated(ranger_standin, "denyPolicyItems") == []
    after = ranger_standin.store.policy(policy["id"])
    assert after["denyPolicyItems"] == policy["denyPolicyItems"]
    assert wider(ranger_standin, b) == []
    again, _ = reconcile(backend, b.model, ALL)
    assert again.empty and not any("delegated admin" in f for f in again.findings)


@pytest.mark.parametrize("exceptions", [False, True], ids=["no-exceptions", "allow-exceptions"])
def test_pushdowns_roles_leave_a_hand_made_policy_with_audit_off(
    ranger_standin: Standin, exceptions: bool
) -> None:
    """A hand-made policy on crm's every-table set, which pushdown merged reader's allow into;
    somebody then removes zed's item and turns its audit off (Ranger accepts it: pushdown's
    item is left). The model revokes reader's grants: without pushdown's item the policy would
    have no allow or deny item and no audit, which Ranger refuses (error 3008). The sync still
    takes reader's allow out (turning the policy's audit on, said in a finding); the policy
    stays, and the sync after it has nothing to do."""
    b = world()
    backend = backend_for(ranger_standin)
    resources = {"database": {"values": ["crm"]}, "table": {"values": ["?*"]}, "column": {"values": ["*"]}}
    created = hand_policy(ranger_standin, resources)
    reconcile(backend, b.model, ALL)
    store = ranger_standin.store
    policy = store.policy(created["id"])
    assert [i["roles"] for i in policy["policyItems"] if i.get("roles")] == [["pd_reader"]]
    edit = {"isAuditEnabled": False, "policyItems": [i for i in policy["policyItems"] if i.get("roles")]}
    if exceptions:
        edit["allowExceptions"] = [{"users": ["bob"], "accesses": [{"type": "update"}]}]
    store.update_policy(created["id"], {**policy, **edit})
    plan, _ = reconcile(backend, b.model, ALL)
    assert any(str(created["name"]) in f and "audit" in f for f in plan.findings)
    revoke_all(b)
    reconcile(backend, b.model, ALL)
    after = store.policy(created["id"])
    assert after["policyItems"] == [] and after["isAuditEnabled"] is True
    assert wider(ranger_standin, b) == []
    assert reconcile(backend, b.model, ALL)[0].empty


def test_a_role_admin_flag_set_by_hand_on_pushdowns_role_is_reset_or_reported(
    ranger_standin: Standin,
) -> None:
    """Somebody makes bob, a model member of ``pd_reader``, an *admin* of that role
    (``isAdmin``): Ranger lets a role admin add users, groups and roles to it (the grant-role
    API), so bob can hand reader's access to anyone between syncs. The next sync must reset
    the flag or report it."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    store = ranger_standin.store
    role = dict(store.role_by_name("pd_reader"))
    role["users"] = [{**u, "isAdmin": u.get("name") == "bob"} for u in role.get("users") or ()]
    store.update_role(store.role_id("pd_reader"), role)
    plan, _ = reconcile(backend, b.model, ALL)
    after = store.role_by_name("pd_reader")
    admins = [u["name"] for u in after.get("users") or () if u.get("isAdmin")]
    assert not admins, admins  # reset (pushdown's roles have no admin members)
    assert any("pd_reader" in f and "admin" in f.lower() for f in plan.findings)


def test_a_removed_groups_hand_made_allow_stays_reported(ranger_standin: Standin) -> None:
    """Model group ``etl`` (member carol) has a hand-made allow on crm.leads (reported). The
    group is removed from the model; the directory (usersync) still puts carol in ``etl``,
    so Ranger still allows her, and the finding disappears."""
    b = world().group("etl", "carol")
    backend = backend_for(ranger_standin)
    resources = {"database": {"values": ["crm"]}, "table": {"values": ["leads"]}, "column": {"values": ["*"]}}
    item = [{"groups": ["etl"], "accesses": [{"type": "select"}]}]
    hand_policy(ranger_standin, resources, policyItems=item)
    plan, _ = reconcile(backend, b.model, ALL)
    assert any("group etl" in f for f in plan.findings)
    b.do(changes.remove_group, "etl")
    plan, _ = reconcile(backend, b.model, ALL)
    groups = lambda u: sorted(b.model.user_groups.get(u, ())) + (["etl"] if u == "carol" else [])  # noqa: E731
    assert wider(ranger_standin, b, groups_of=groups) == [] or any("etl" in f for f in plan.findings)


@pytest.mark.parametrize("value", ["no", "0", "off", "yes"])
def test_the_deny_option_read_as_ranger_reads_it(ranger_standin: Standin, value: str) -> None:
    """The Hive service definition's ``enableDenyAndExceptionsInPolicies`` is set to ``no``
    (``0``, ``off``, even ``yes``). Ranger (ServiceDefUtil.getBooleanValue) takes any non-empty
    value through ``Boolean.valueOf``: only ``true`` enables deny items, so they are all off.
    pushdown treats everything but ``false`` as on and keeps relying on its deny item on
    orders under the every-table allow."""
    b = world()
    backend = backend_for(ranger_standin)
    sdef = ranger_standin.store.service_def("hive")
    sdef.setdefault("options", {})["enableDenyAndExceptionsInPolicies"] = value
    ranger_standin.store.update_service_def("hive", sdef)
    reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == []


@pytest.mark.parametrize(
    ("value", "on"),
    [
        (None, True),
        ("", True),
        ("true", True),
        ("TRUE", True),
        (" true", False),
        ("yes", False),
        ("no", False),
    ],
)
def test_the_standin_reads_the_deny_option_as_ranger_does(value: str | None, on: bool) -> None:
    """The stand-in's engine reads the option as Ranger does (Boolean.valueOf, untrimmed)."""
    from pushdown_lab.ranger_standin.evaluator import option_true

    from pushdown_ranger.backend import _deny_enabled

    sdef = {"options": {} if value is None else {"enableDenyAndExceptionsInPolicies": value}}
    assert option_true(sdef, "enableDenyAndExceptionsInPolicies", True) is on
    assert _deny_enabled(sdef) is on


#: items today's Ranger refuses (stored by an older one), each with the decisions it makes
STORED_BEFORE = {
    "access-not-allowed": {
        "policyItems": [{"users": ["yan"], "accesses": [{"type": "select", "isAllowed": False}]}]
    },
    "no-access": {"policyItems": [{"users": ["yan"], "accesses": [], "delegateAdmin": False}]},
    "deny-with-an-access-not-allowed": {
        "denyPolicyItems": [
            {"users": ["yan"], "accesses": [{"type": "update", "isAllowed": False}, {"type": "select"}]}
        ]
    },
    "blank-names": {
        "policyItems": [{"users": ["yan", " "], "groups": [""], "accesses": [{"type": "select"}]}]
    },
    "exception-naming-nobody": {"allowExceptions": [{"users": [], "accesses": [{"type": "select"}]}]},
    "deny-under-deny-all-else": {
        "isDenyAllElse": True,
        "denyPolicyItems": [{"users": ["zed"], "accesses": [{"type": "update"}]}],
    },
}


@pytest.mark.parametrize("stored", sorted(STORED_BEFORE))
def test_items_ranger_now_refuses_never_hold_back_the_narrowing(ranger_standin: Standin, stored: str) -> None:
    """A hand-made policy on crm's every-table set (zed's allow), into which pushdown merged
    reader's allow, also holds items today's Ranger refuses (stored by an older Ranger). The
    model revokes reader's grants: the sync that takes reader's allow out carries those items
    in a form Ranger accepts with the same decisions (said in a finding the sync before), so
    the narrowing is written; every decision for the others is the same."""
    b = world()
    backend = backend_for(ranger_standin)
    resources = {"database": {"values": ["crm"]}, "table": {"values": ["?*"]}, "column": {"values": ["*"]}}
    created = hand_policy(ranger_standin, resources)
    reconcile(backend, b.model, ALL)
    store = ranger_standin.store
    policy = store.policy(created["id"])
    edit = {
        k: [*(policy.get(k) or []), *v] if isinstance(v, list) else v
        for k, v in STORED_BEFORE[stored].items()
    }
    store.update_policy(created["id"], {**policy, **edit}, checked=False)
    where = {"database": "crm", "table": "leads", "column": "c"}

    def decisions() -> list[bool]:
        return [
            ranger_standin.is_access_allowed("hive", where, access, user=user)
            for user in ("zed", "yan", "null")
            for access in ("select", "update")
        ]

    before = decisions()
    plan, _ = reconcile(backend, b.model, ALL)
    assert any(str(created["name"]) in f and "Ranger refuses" in f for f in plan.findings)
    revoke_all(b)
    reconcile(backend, b.model, ALL)
    after = store.policy(created["id"])
    assert not any("pd_reader" in (i.get("roles") or ()) for i in after["policyItems"])
    assert decisions() == before
    assert wider(ranger_standin, b) == []
    store.update_policy(after["id"], after)  # Ranger accepts it as written
    again, _ = reconcile(backend, b.model, ALL)
    assert again.empty and not any("Ranger refuses" in f for f in again.findings)
