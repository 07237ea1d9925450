"""Issue 23's Ranger paths: fields and forms of Ranger's own authorization model that
pushdown did not read, each a place where Ranger allowed what the model denies (or an error
held back a narrowing). After each, the stand-in's engine is never wider than the evaluator,
or a finding names what pushdown cannot remove."""

from __future__ import annotations

from typing import Any

import pytest
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import BackendError
from pushdown.model import changes as ch
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.facts import PolicyFact
from pushdown_ranger.readback import policy_name
from pushdown_ranger.withdraw import withdraw
from tests.builders import Builder

from .probe import _asker, probe
from .world import backend_for, sales

pytestmark = pytest.mark.ranger
ALL = Scope.everything()
USERS = ("alice", "bob", "carol", "stranger")
ORDERS = {"database": {"values": ["crm"]}, "table": {"values": ["orders"]}, "column": {"values": ["*"]}}


def world() -> Builder:
    """bob and alice (group analysts) read every table of crm; reader's DENY on orders."""
    return (
        sales()
        .schema("sales.ops")
        .table("sales.ops.runs")
        .deny("reader", "table sales.crm.orders", "SELECT_TABLE")
    )


def hand(standin: Standin, resources: dict[str, Any], service: str = "hive", **extra: Any) -> dict[str, Any]:
    policy = {
        "service": service,
        "name": "hand " + ",".join(f"{k}={v['values'][0]}" for k, v in sorted(resources.items())),
        "resources": resources,
        "policyItems": [{"users": ["zed"], "accesses": [{"type": "select", "isAllowed": True}]}],
        **extra,
    }
    return standin.store.create_policy(policy, create_missing=True)


def etl(b: Builder, *who: str) -> Any:
    """Groups as the enforcing host resolves them: ``who`` are also in ``etl``, a group the
    model does not know."""
    return lambda u: sorted(b.model.user_groups.get(u, ())) + (["etl"] if u in who else [])


# -- N1: override priority on a wider topic or fileset resource ----------------------------------


@pytest.mark.parametrize(
    ("obj", "service", "resources", "access"),
    [
        ("topic sales.crm.events", "kafka", {"topic": {"values": ["*"]}}, "consume"),
        ("fileset sales.crm.raw", "hdfs", {"path": {"values": ["/lake"], "isRecursive": True}}, "read"),
    ],
    ids=["kafka-all-topics", "hdfs-recursive-lake"],
)
def test_n1_override_priority_policy_on_wider_kafka_or_hdfs_resource_is_reported(
    ranger_standin: Standin, obj: str, service: str, resources: dict[str, Any], access: str
) -> None:
    """reader is DENIED ``obj``; a hand-made policy with override priority on a wider
    resource allows ``etl`` (the host puts bob in it): its allow beats every normal deny
    item. pushdown cannot remove it; it must not stay silent (the Hive service already
    treats override priority on any matching shape)."""
    b = (
        world()
        .create("topic sales.crm.events")
        .create("fileset sales.crm.raw", properties={"location": "/lake/raw"})
        .allow("reader", "catalog sales", "CONSUME_TOPIC", "READ_FILESET")
        .deny("reader", obj, "CONSUME_TOPIC" if service == "kafka" else "READ_FILESET")
    )
    backend = backend_for(ranger_standin)
    item = [{"groups": ["etl"], "accesses": [{"type": access}]}]
    policy = hand(ranger_standin, resources, service=service, policyPriority=1, policyItems=item)
    plan, _ = reconcile(backend, b.model, ALL)
    bad = [
        w
        for w in probe(ranger_standin, b.model, "sales", USERS, groups_of=etl(b, "bob")).wider
        if w[2] == obj
    ]
    found = [f for f in plan.findings if str(policy["name"]) in f and "override priority" in f]
    assert bad == [] or found, (bad, plan.findings)
    assert found
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []
    assert planner.plan(backend, b.model, ALL).empty


# -- N2: a denied fileset in another location form under an allowed one ---------------------------


@pytest.mark.parametrize(
    "location",
    [
        "hdfs:/lake/raw/pii",
        "webhdfs://nn:9870/lake/raw/pii",
        "swebhdfs://nn:9871/lake/raw/pii",
        "viewfs://cluster/lake/raw/pii",
        "HDFS:///lake/raw/pii",
    ],
    ids=["no-authority", "webhdfs", "swebhdfs", "viewfs", "empty-authority"],
)
def test_n2_a_denied_fileset_in_any_location_form_under_an_allowed_one_is_denied(
    ranger_standin: Standin, location: str
) -> None:
    """``raw`` at ``/lake/raw`` (reader may read), ``pii`` at ``location`` (reader DENIED):
    every form is the HDFS path ``/lake/raw/pii`` (``viewfs`` may be any HDFS path: the mount
    table decides), so the recursive allow on ``/lake/raw`` must not reach bob there."""
    b = (
        sales()
        .create("fileset sales.crm.raw", properties={"location": "/lake/raw"})
        .create("fileset sales.crm.pii", properties={"location": location})
        .allow("reader", "catalog sales", "READ_FILESET")
        .deny("reader", "fileset sales.crm.pii", "READ_FILESET")
    )
    plan, _ = reconcile(backend_for(ranger_standin), b.model, ALL)
    ask = _asker(ranger_standin)
    assert not ask("hdfs", {"path": "/lake/raw/pii"}, "read", "bob", [])
    assert not ask("hdfs", {"path": "/lake/raw/pii/part-0"}, "read", "bob", [])
    assert not any(
        "pii" in n and "narrower" in n and "cannot" not in n and "usable" not in n for n in plan.notes
    ) or (not ask("hdfs", {"path": "/lake/raw/pii"}, "read", "bob", []))


# -- N8: a second catalog with tables on the same Ranger backend ---------------------------------


def test_n8_a_second_catalog_with_tables_keeps_the_first_catalogs_deny_items(ranger_standin: Standin) -> None:
    """``sales`` holds tables in service hive, with reader's DENY on orders written as a deny
    item; a hand-made allow on ``database=*`` for ``etl`` (bob in it) loses to it. Then a
    catalog ``aaa`` *with tables* joins the backend: Ranger has one Hive service, so every
    Hive policy holds only what every catalog decides and reader's DENY stays."""
    b = world()
    backend = backend_for(ranger_standin)
    resources = {"database": {"values": ["*"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}}
    hand(ranger_standin, resources, policyItems=[{"groups": ["etl"], "accesses": [{"type": "select"}]}])
    reconcile(backend, b.model, ALL)
    assert probe(ranger_standin, b.model, "sales", USERS, groups_of=etl(b, "bob")).wider == []
    b.catalog("aaa", backend="rg").schema("aaa.other").table("aaa.other.t")
    plan, _ = reconcile(backend, b.model, ALL)
    assert probe(ranger_standin, b.model, "sales", USERS, groups_of=etl(b, "bob")).wider == []
    ask = _asker(ranger_standin)
    assert not ask("hive", {"database": "crm", "table": "orders"}, "select", "bob", ["etl"])
    assert any("aaa" in n and "sales" in n for n in plan.notes), plan.notes
    assert planner.plan(backend, b.model, ALL).empty


def test_n8_two_catalogs_naming_one_database_keep_what_both_decide(ranger_standin: Standin) -> None:
    """``sales`` and ``aaa`` both hold Hive database ``crm`` (one Hive metastore): Ranger
    cannot tell which catalog a request comes through, so an allow stands only where both
    allow it and a DENY of either is written."""
    b = world().catalog("aaa", backend="rg").schema("aaa.crm").table("aaa.crm.orders")
    b.role("other", users=["carol"]).allow(
        "other", "catalog aaa", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"
    )
    reconcile(backend_for(ranger_standin), b.model, ALL)
    ask = _asker(ranger_standin)
    assert not ask("hive", {"database": "crm", "table": "orders"}, "select", "bob", [])
    assert not ask("hive", {"database": "crm", "table": "orders"}, "select", "carol", [])
    assert not ask("hive", {"database": "crm", "table": "leads"}, "select", "carol", [])


# -- N9: a user holding only a DENY ---------------------------------------------------------------


def test_n9_a_user_holding_only_a_deny_on_a_table_gets_the_deny_written(ranger_standin: Standin) -> None:
    """carol holds ``blocked`` (DENY select on orders) and nothing else; a hand-made allow on
    ``database=*`` for ``etl`` (the host puts carol in it). The DENY must be written: Ranger's
    deny item beats the normal-priority allow, as it does for a topic."""
    b = world().role("blocked", users=["carol"]).deny("blocked", "table sales.crm.orders", "SELECT_TABLE")
    b.deny("blocked", "schema sales.ops", "SELECT_TABLE")
    resources = {"database": {"values": ["*"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}}
    backend = backend_for(ranger_standin)
    hand(ranger_standin, resources, policyItems=[{"groups": ["etl"], "accesses": [{"type": "select"}]}])
    reconcile(backend, b.model, ALL)
    ask = _asker(ranger_standin)
    assert not ask("hive", {"database": "crm", "table": "orders"}, "select", "carol", ["etl"])
    assert not ask("hive", {"database": "ops", "table": "runs"}, "select", "carol", ["etl"])
    assert not ask("hive", {"database": "ops", "table": "later"}, "select", "carol", ["etl"])
    assert ask("hive", {"database": "crm", "table": "leads"}, "select", "carol", ["etl"])  # not denied there
    assert planner.plan(backend, b.model, ALL).empty


# -- N11 and the held-out class: policy names ----------------------------------------------------


def test_n11_a_hand_made_policy_taking_pushdowns_deny_policy_name_never_holds_back_the_deny(
    ranger_standin: Standin,
) -> None:
    """A hand-made policy (elsewhere) takes the name pushdown gives its deny policy on
    orders: Ranger refuses a second policy of that name (3006). pushdown writes it under
    another name; the DENY holds and no allow stands behind a refused write."""
    backend = backend_for(ranger_standin)
    fact = PolicyFact(
        "hive",
        (("column", ("*",), False), ("database", ("crm",), False), ("table", ("orders",), False)),
        frozenset(),
        frozenset(),
    )
    squatter = {
        "service": "hive",
        "name": policy_name(fact),
        "resources": {"database": {"values": ["elsewhere"]}},
        "policyItems": [{"users": ["zed"], "accesses": [{"type": "select"}]}],
    }
    ranger_standin.store.create_policy(squatter)
    b = world()
    reconcile(backend, b.model, ALL)
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []
    assert planner.plan(backend, b.model, ALL).empty


@pytest.mark.parametrize(
    ("first", "second"),
    [(("crm", "orders,table=x"), ("crm,table=orders", "x")), (("d", "y"), ("d,table=y", "z"))],
    ids=["table-in-name", "database-in-name"],
)
def test_n11_a_database_whose_policy_name_equals_another_resource_sets_gets_its_own(
    ranger_standin: Standin, first: tuple[str, str], second: tuple[str, str]
) -> None:
    """Table ``orders,table=x`` of database ``crm`` and table ``x`` of database
    ``crm,table=orders`` read alike (``column=*,database=crm,table=orders,table=x``): with
    names made of the resources alone the second DENY's policy is refused (3006) at every
    sync while the every-table allow stays. Each resource set's name must be its own."""
    b = (
        Builder()
        .users("alice", "bob", "carol")
        .catalog("sales", backend="rg")
        .role("reader", users=["bob"])
        .allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
    )
    for d, t in (first, second):
        b.schema(f"sales.{d}").table(f"sales.{d}.{t}").table(f"sales.{d}.other")
        b.deny("reader", f"table sales.{d}.{t}", "SELECT_TABLE")
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    names = [p["name"] for p in ranger_standin.store.list_policies({})]
    assert len(names) == len(set(names))
    ask = _asker(ranger_standin)
    for d, t in (first, second):
        assert not ask("hive", {"database": d, "table": t}, "select", "bob", [])
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []
    assert planner.plan(backend, b.model, ALL).empty


def test_policy_names_are_unique_per_resource_set() -> None:
    a = PolicyFact("hive", (("database", ("d,table=y",), False),), frozenset(), frozenset())
    b = PolicyFact("hive", (("database", ("d",), False), ("table", ("y",), False)), frozenset(), frozenset())
    assert policy_name(a) != policy_name(b)
    assert policy_name(a) != policy_name(a, "x")


# -- side bug: a voided database keeps its per-table allows --------------------------------------


def test_a_voided_database_keeps_pushdowns_per_table_allows(ranger_standin: Standin) -> None:
    """A hand-made policy with deny exceptions on orders voids crm's deny items: crm is
    compiled without them (per-table allow items), and the finding says so. The second
    compile must keep the Hive catalog, or every Hive policy of crm goes (bob may read
    leads, and the finding claims per-table allows were written)."""
    b = world()
    exempt = [{"users": ["zed"], "accesses": [{"type": "select", "isAllowed": True}]}]
    backend = backend_for(ranger_standin)
    hand(ranger_standin, ORDERS, denyExceptions=exempt)
    plan, _ = reconcile(backend, b.model, ALL)
    assert any("database crm" in f and "no deny items" in f for f in plan.findings)
    ask = _asker(ranger_standin)
    assert ask("hive", {"database": "crm", "table": "leads"}, "select", "bob", [])
    assert not ask("hive", {"database": "crm", "table": "orders"}, "select", "bob", [])
    result = probe(ranger_standin, b.model, "sales", USERS)
    assert (
        result.wider == [] and ("bob", "select_table/select", "table sales.crm.leads") not in result.narrower
    )


# -- N7: the HDFS plugin's fallback to HDFS permissions ------------------------------------------


@pytest.mark.parametrize("fallback", ["on", "off"])
def test_n7_the_hdfs_plugins_fallback_to_hdfs_permissions_is_reported(
    ranger_standin: Standin, fallback: str
) -> None:
    """carol has no grant on fileset raw: Ranger's answer is "not determined", and the HDFS
    plugin then asks HDFS's mode bits (``xasecure.add-hadoop-authorization``, on by default).
    pushdown cannot see the plugin's settings: a finding until the operator says it is off."""
    b = sales().create("fileset sales.crm.raw", properties={"location": "/lake/raw"})
    b.allow("reader", "catalog sales", "READ_FILESET")
    backend = backend_for(ranger_standin, hdfs_fallback=fallback)
    reconcile(backend, b.model, ALL)
    found = [
        f for f in planner.plan(backend, b.model, ALL).findings if "xasecure.add-hadoop-authorization" in f
    ]
    assert bool(found) == (fallback == "on")
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []


# -- fields that change a decision only some of the time, or only narrow ---------------------------


@pytest.mark.parametrize(
    "extra",
    [
        {"conditions": [{"type": "ip-range", "values": ["10.0.0.0/8"]}]},
        {"validitySchedules": [{"startTime": "2020/01/01 00:00:00", "endTime": "2020/01/02 00:00:00"}]},
        {"isEnabled": False},
    ],
    ids=["policy-conditions", "validity-schedule", "disabled"],
)
def test_a_policy_holding_deny_items_only_some_of_the_time_is_never_relied_on(
    ranger_standin: Standin, extra: dict[str, Any]
) -> None:
    """A hand-made policy on orders (where pushdown would merge reader's deny item) with
    policy conditions, a validity schedule, or disabled: its deny items hold only some of the
    time or never, so crm is compiled without deny items, and a finding says so."""
    b = world()
    backend = backend_for(ranger_standin)
    hand(ranger_standin, ORDERS, **extra)
    plan, _ = reconcile(backend, b.model, ALL)
    assert any("database crm" in f and "no deny items" in f for f in plan.findings), plan.findings
    ours = [p for p in ranger_standin.store.list_policies({}) if p["name"].startswith("pushdown")]
    assert all(not p.get("denyPolicyItems") for p in ours if p["resources"]["database"]["values"] == ["crm"])
    assert planner.plan(backend, b.model, ALL).empty


@pytest.mark.parametrize(
    "field",
    ["deny-all-else", "masking", "row-filter", "audit-off", "public-deny"],
)
def test_fields_that_only_narrow_or_only_audit_never_widen(ranger_standin: Standin, field: str) -> None:
    """``isDenyAllElse`` only denies; a masking or row-filter policy (policy types 1 and 2)
    applies after the access decision and never allows an access; ``isAuditEnabled`` only
    says what is logged; a deny item for ``public`` only denies. None makes Ranger wider."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    every = {"database": {"values": ["*"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}}
    if field == "deny-all-else":
        hand(ranger_standin, every, isDenyAllElse=True, policyItems=[])
    elif field in ("masking", "row-filter"):
        body: dict[str, Any] = {
            "service": "hive",
            "name": f"hand {field}",
            "policyType": 1 if field == "masking" else 2,
        }
        if field == "masking":
            body["resources"] = ORDERS
            body["dataMaskPolicyItems"] = [
                {
                    "users": ["bob"],
                    "accesses": [{"type": "select"}],
                    "dataMaskInfo": {"dataMaskType": "MASK_NONE"},
                }
            ]
        else:
            body["resources"] = {k: v for k, v in ORDERS.items() if k != "column"}
            body["rowFilterPolicyItems"] = [
                {"users": ["bob"], "accesses": [{"type": "select"}], "rowFilterInfo": {"filterExpr": "1=1"}}
            ]
        ranger_standin.store.create_policy(body)
    elif field == "audit-off":
        for p in ranger_standin.store.list_policies({}):
            ranger_standin.store.update_policy(p["id"], {**p, "isAuditEnabled": False})
    else:
        items = [{"groups": ["public"], "accesses": [{"type": "select"}]}]
        hand(ranger_standin, every, policyItems=[], denyPolicyItems=items)
    reconcile(backend, b.model, ALL)
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []


def test_a_hand_made_allow_to_the_public_group_is_a_finding(ranger_standin: Standin) -> None:
    """An allow item for group ``public`` reaches every user: reported."""
    b = world()
    backend = backend_for(ranger_standin)
    every = {"database": {"values": ["*"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}}
    policy = hand(
        ranger_standin, every, policyItems=[{"groups": ["public"], "accesses": [{"type": "select"}]}]
    )
    plan, _ = reconcile(backend, b.model, ALL)
    assert any(str(policy["name"]) in f and "group public" in f for f in plan.findings)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"isEnabled": False}, "is disabled"),
        ({"configs": {"service.admin.users": "zed"}}, "service.admin.users"),
        ({"configs": {"service.admin.groups": "etl"}}, "service.admin.groups"),
    ],
    ids=["service-disabled", "service-admin-users", "service-admin-groups"],
)
def test_a_disabled_service_and_service_admins_are_reported(
    ranger_standin: Standin, change: dict[str, Any], words: str
) -> None:
    """A disabled service enforces none of pushdown's policies (HDFS falls back to its
    permissions); service admin users may write policies outside pushdown: both reported."""
    b = world()
    backend = backend_for(ranger_standin)
    store = ranger_standin.store
    with store.lock:
        service = store.services["hive"]
        for key, value in change.items():
            if isinstance(value, dict):
                service.setdefault(key, {}).update(value)
            else:
                service[key] = value
    plan, _ = reconcile(backend, b.model, ALL)
    assert any(words in f for f in plan.findings), plan.findings


def test_n11_a_refused_deny_write_withdraws_the_allow_it_protects(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """reader reads every table of crm; then reader is DENIED orders. Ranger refuses the new
    deny policy on orders (any rule of the server): the every-table allow it protects
    against is withdrawn, never left standing; the next sync writes both."""
    b = sales()
    backend = backend_for(ranger_standin, retries=0)
    reconcile(backend, b.model, ALL)
    ask = _asker(ranger_standin)
    assert ask("hive", {"database": "crm", "table": "orders"}, "select", "bob", [])
    b.deny("reader", "table sales.crm.orders", "SELECT_TABLE")
    create = backend.api.create_policy

    def refuse(policy: dict[str, Any]) -> dict[str, Any]:
        if policy["resources"].get("table", {}).get("values") == ["orders"]:
            raise BackendError("rg", "Ranger refused create policy (HTTP 400): a rule of the server")
        return create(policy)

    monkeypatch.setattr(backend.api, "create_policy", refuse)
    with pytest.raises(BackendError, match="withdrawn"):
        reconcile(backend, b.model, ALL, retries=0)
    assert not ask("hive", {"database": "crm", "table": "orders"}, "select", "bob", [])
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []
    monkeypatch.undo()
    reconcile(backend, b.model, ALL)
    assert planner.plan(backend, b.model, ALL).empty
    assert ask("hive", {"database": "crm", "table": "leads"}, "select", "bob", [])
    assert not ask("hive", {"database": "crm", "table": "orders"}, "select", "bob", [])


def test_n8_a_scoped_sync_in_one_catalog_keeps_the_other_catalogs_deny_items(ranger_standin: Standin) -> None:
    """``aaa`` (first by name) and ``sales`` both hold Hive database crm; sales DENIES reader
    orders. A change in ``aaa.crm`` is a scoped sync of that database: it compiles every
    catalog's crm, or sales' deny item on orders would go."""
    b = world().catalog("aaa", backend="rg").schema("aaa.crm").table("aaa.crm.orders")
    b.allow("reader", "catalog aaa", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    ask = _asker(ranger_standin)
    assert not ask("hive", {"database": "crm", "table": "orders"}, "select", "bob", [])
    events = ch.create_object(b.model, ObjectRef.parse("table aaa.crm.more"))
    for event in events:
        b.model.apply(event)
    reconcile(backend, b.model, Scope.union(scope_of(e) for e in events))
    assert not ask("hive", {"database": "crm", "table": "orders"}, "select", "bob", [])


def _two_readers(obj: str, *privileges: str) -> Builder:
    """reader (bob and carol) holds ``privileges`` on ``obj`` alone (a policy of its own)."""
    return (
        Builder()
        .users("alice", "bob", "carol")
        .catalog("sales", backend="rg")
        .schema("sales.crm")
        .table("sales.crm.orders")
        .table("sales.crm.leads")
        .role("reader", users=["bob", "carol"])
        .allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA")
        .allow("reader", obj, *privileges)
    )


def _refuse_deny_items_on(backend: Any, monkeypatch: pytest.MonkeyPatch, resources: dict[str, Any]) -> None:
    """Ranger refuses every write of a policy on ``resources`` that holds deny items."""
    update, create = backend.api.update_policy, backend.api.create_policy

    def refused(policy: dict[str, Any]) -> bool:
        mine = {k: v.get("values") for k, v in policy["resources"].items()}
        return mine == resources and bool(policy.get("denyPolicyItems"))

    def refuse_update(pid: int, policy: dict[str, Any]) -> dict[str, Any]:
        if refused(policy):
            raise BackendError("rg", "Ranger refused update policy (HTTP 400): a rule of the server")
        return update(pid, policy)

    def refuse_create(policy: dict[str, Any]) -> dict[str, Any]:
        if refused(policy):
            raise BackendError("rg", "Ranger refused create policy (HTTP 400): a rule of the server")
        return create(policy)

    monkeypatch.setattr(backend.api, "update_policy", refuse_update)
    monkeypatch.setattr(backend.api, "create_policy", refuse_create)


@pytest.mark.parametrize(
    ("obj", "privilege", "resources", "request_", "access"),
    [
        (
            "table sales.crm.orders",
            "SELECT_TABLE",
            {"column": ["*"], "database": ["crm"], "table": ["orders"]},
            {"database": "crm", "table": "orders"},
            "select",
        ),
        (
            "schema sales.crm",
            "CREATE_TABLE",
            {"column": ["*"], "database": ["crm"], "table": ["?*"]},
            {"database": "crm", "table": "fresh"},
            "create",
        ),
    ],
    ids=["table", "every-table"],
)
def test_a_refused_deny_on_the_same_resource_withdraws_its_allow(
    ranger_standin: Standin,
    monkeypatch: pytest.MonkeyPatch,
    obj: str,
    privilege: str,
    resources: dict[str, Any],
    request_: dict[str, str],
    access: str,
) -> None:
    """reader (bob, carol) is allowed ``obj`` by a policy of its own; then bob is DENIED it.
    The policy's new form allows carol and denies bob; Ranger refuses every write of it
    holding deny items, so the narrowing half (no allow, bob's deny) is refused: reader's
    allow on the same resource set is withdrawn, never left standing behind the failed DENY
    (a ``database=d`` deny item encloses no other set of pushdown's: only its own)."""
    b = _two_readers(obj, privilege)
    backend = backend_for(ranger_standin, retries=0)
    reconcile(backend, b.model, ALL)
    ask = _asker(ranger_standin)
    assert ask("hive", request_, access, "bob", [])
    b.role("blocked", users=["bob"]).deny("blocked", obj, privilege)
    _refuse_deny_items_on(backend, monkeypatch, resources)
    with pytest.raises(BackendError, match="withdrawn"):
        reconcile(backend, b.model, ALL, retries=0)
    assert not ask("hive", request_, access, "bob", [])
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []
    monkeypatch.undo()
    reconcile(backend, b.model, ALL)
    assert planner.plan(backend, b.model, ALL).empty
    assert not ask("hive", request_, access, "bob", [])
    assert ask("hive", request_, access, "carol", [])


def test_a_refused_deny_on_the_database_withdraws_its_allow() -> None:
    """The database-level case without a server: a refused deny item on ``database=d``
    withdraws pushdown's allow items held on ``database=d`` (others' items stay)."""
    key = ("hive", (("database", ("d",), False),))
    held = {
        "service": "hive",
        "resources": {"database": {"values": ["d"]}},
        "policyItems": [
            {"roles": ["pd_R"], "accesses": [{"type": "create", "isAllowed": True}]},
            {"users": ["zed"], "accesses": [{"type": "create", "isAllowed": True}]},
        ],
    }
    written: list[PolicyFact] = []
    denied = PolicyFact(*key, frozenset(), frozenset({("pdu_U", "create")}))
    said = withdraw([denied], {key: held}, lambda r: r.startswith("pd"), lambda k, f: written.append(f))
    assert said and written == [PolicyFact(*key, frozenset(), frozenset())]


def test_a_refused_member_of_a_denied_role_withdraws_the_allow_its_deny_protects(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """reader (bob, alice) reads every table of crm; blocked (carol) is DENIED orders. bob
    joins blocked: only the role's members change, and Ranger refuses that write. The deny
    item on orders does not reach bob, so the every-table allow it protects against is
    withdrawn; the next sync writes both."""
    b = sales().role("blocked", users=["carol"]).deny("blocked", "table sales.crm.orders", "SELECT_TABLE")
    backend = backend_for(ranger_standin, retries=0)
    reconcile(backend, b.model, ALL)
    ask = _asker(ranger_standin)
    assert ask("hive", {"database": "crm", "table": "orders"}, "select", "bob", [])
    b.grant_role("blocked", users=["bob"])
    update = backend.api.update_role

    def refuse(rid: int, role: dict[str, Any]) -> dict[str, Any]:
        if "bob" in [m["name"] for m in role.get("users") or ()] and role["name"].endswith("blocked"):
            raise BackendError("rg", "Ranger refused update role (HTTP 400): a rule of the server")
        return update(rid, role)

    monkeypatch.setattr(backend.api, "update_role", refuse)
    with pytest.raises(BackendError, match="withdrawn"):
        reconcile(backend, b.model, ALL, retries=0)
    assert not ask("hive", {"database": "crm", "table": "orders"}, "select", "bob", [])
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []
    monkeypatch.undo()
    reconcile(backend, b.model, ALL)
    assert planner.plan(backend, b.model, ALL).empty
    assert not ask("hive", {"database": "crm", "table": "orders"}, "select", "bob", [])
    assert ask("hive", {"database": "crm", "table": "leads"}, "select", "bob", [])
