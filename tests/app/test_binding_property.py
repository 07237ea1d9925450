"""Issue 24: nothing a caller registers changes what another principal may do.

A creator-only caller (``mallory``: CREATE_CATALOG on the metalake, CREATE_SCHEMA /
CREATE_FILESET / CREATE_TOPIC / CREATE_TABLE in one schema of each enforced catalog)
registers random objects with every property and location form. After each run, for
every other principal: the evaluator's decisions on the objects that existed before,
and what each backend compiles for them (the recording backend's permits, MySQL's
grants, Ranger's policies and roles), are what they were. Each backend's catalogs are
the configuration's (or, for a backend configured with none, the administrator's
``backend`` property) before and after."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.app.service import AccessControl
from pushdown.app.settings import from_mapping
from pushdown.decide.evaluator import Evaluator
from pushdown.errors import BindingRefused, ConfigError, Forbidden, ModelError
from pushdown.host.recording import RecordingBackend
from pushdown.journal.store import Store
from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext, Snapshot
from pushdown.reconcile.bindings import Bindings, check, claimed
from pushdown.reconcile.scope import Scope

pytest.importorskip("pushdown_mysql")
pytest.importorskip("pushdown_ranger")

from pushdown_mysql.backend import MySQLBackend
from pushdown_mysql.compile import AccountNaming, ServerObjects
from pushdown_mysql.compile import compile_desired as mysql_desired
from pushdown_mysql.facts import Account
from pushdown_ranger.compile.desired import RangerNaming
from pushdown_ranger.compile.desired import compile_desired as ranger_desired

USERS = ("olga", "ann", "bob", "mallory")
OTHERS = ("olga", "ann", "bob")
ROOTS = {"files": ("/lake/files",), "*": ("hdfs://nn/lake/shared",)}
OPS = {
    "catalog": ("load_catalog", "create_schema"),
    "schema": ("load_schema", "create_table", "create_fileset", "create_topic"),
    "table": ("load_table", "alter_table"),
    "fileset": ("load_fileset", "alter_fileset"),
    "topic": ("load_topic", "alter_topic"),
}

KEYS = (
    "backend",
    "Backend",
    "BACKEND",
    " backend",
    "pushdown.backend",
    "location",
    "Location",
    "LOCATION",
    "storageLocation",
    "storageLocations",
    "pushdown.rest.storageLocation",
    "path",
    "comment",
)
BACKENDS = ("rec", "my", "rg", "none", "REC")
LOCATIONS = (
    "/finance",
    "/lake/files/finance",
    "/lake/files/finance/",
    "/lake/files/finance/q1",
    "/lake/files/Finance",
    "/LAKE/files/finance",
    "hdfs://nn:8020/lake/files/finance",
    "hdfs://other/lake/files/finance/x",
    "hdfs:/lake/files/finance",
    "hdfs:///lake/files/finance/x",
    "webhdfs://nn/lake/files/finance",
    "viewfs://cluster/lake/files/finance",
    "s3a://bucket/lake/files/finance",
    "/lake/files/team/../finance",
    "/lake/files/team/%2e%2e/finance",
    "/lake/files/team%2F..%2Ffinance",
    "/lake/files/team/./x",
    "/lake/files/team/x",
    "/lake/files/team/x/",
    "/lake/files/team",
    "/lake/files",
    "/lake",
    "/",
    "",
    "relative/path",
    '["/lake/files/finance"]',
    '["/lake/files/team/y", "/finance"]',
    "hdfs://nn/lake/shared/pii",
    "/lake/shared",
)
PARENTS = {
    "catalog": [()],
    "schema": [("files",), ("payroll",), ("legacy",), ("mine",)],
    "table": [("payroll", "team"), ("payroll", "hr"), ("legacy", "team")],
    "fileset": [("files", "team"), ("files", "finance"), ("mine", "s")],
    "topic": [("files", "team"), ("files", "finance")],
}
NAMES = st.one_of(
    st.sampled_from(
        ["payroll", "Payroll", "files", "legacy", "ledger", "Ledger", "events", "EVENTS", "mine", "s"]
    ),
    st.text(alphabet="aAfF._`'é-", min_size=1, max_size=6),
)
VALUES = st.one_of(st.sampled_from(BACKENDS), st.sampled_from(LOCATIONS))
BINDING_KEYS = st.sampled_from([k for k in KEYS if "backend" in k.casefold()])
LOCATION_KEYS = st.sampled_from([k for k in KEYS if "backend" not in k.casefold() and k != "comment"])
ATTEMPT = st.one_of(
    st.tuples(  # a catalog that names a backend (or squats a configured name)
        st.just("catalog"),
        st.just(0),
        NAMES,
        st.dictionaries(BINDING_KEYS, st.sampled_from(BACKENDS), max_size=2),
    ),
    st.tuples(  # a fileset that chooses a location
        st.just("fileset"),
        st.integers(0, 3),
        NAMES,
        st.dictionaries(LOCATION_KEYS, st.sampled_from(LOCATIONS), min_size=1, max_size=2),
    ),
    st.tuples(st.just("topic"), st.integers(0, 3), NAMES, st.just({})),  # one Kafka topic with another
    st.tuples(  # anything else
        st.sampled_from(sorted(PARENTS)),
        st.integers(0, 3),
        NAMES,
        st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=3),
    ),
)


#: what the MySQL backend's server holds, for its compile and its answer on registrations
SERVER = ServerObjects(frozenset({"hr", "team"}), frozenset({("hr", "salaries")}))


class OfflineMySQL(MySQLBackend):
    """The MySQL backend without a server: its answer on a registration comes from
    :data:`SERVER` (this test checks the model and the compiles, not the server's query)."""

    def on_server(self, model: Model, obj: ObjectRef) -> bool | None:
        if obj.type.value == "schema":
            return obj.names[1] in SERVER.databases
        if obj.type.value == "table":
            return (obj.names[1], obj.names[2]) in SERVER.tables
        return False  # as the backend answers: the server holds no topics or filesets


def backends() -> dict[str, Any]:
    rec = RecordingBackend(
        BackendContext("rec", {}, catalogs=frozenset({"payroll", "files"}), locations=ROOTS)
    )
    my = OfflineMySQL(BackendContext("my", {"user": "pushdown"}))  # bound by the admin's property
    rg = RecordingBackend(BackendContext("rg", {}, catalogs=frozenset({"files"}), locations=ROOTS))
    return {"rec": rec, "my": my, "rg": rg}


def estate() -> AccessControl:
    ac = AccessControl(Store(":memory:"), backends(), push=False)
    for user in USERS:
        ac.add_user(user)
    ac.create_object("catalog payroll", "olga")
    ac.create_object("catalog legacy", "olga", {"backend": "my"})
    ac.create_object("catalog files", "olga")
    for schema in ("payroll.hr", "payroll.team", "legacy.hr", "legacy.team", "files.team", "files.finance"):
        ac.create_object(f"schema {schema}", "olga")
    ac.create_object("table payroll.hr.salaries", "olga")
    ac.create_object("table legacy.hr.salaries", "olga")
    ac.create_object("fileset files.finance.ledger", "olga", {"location": "/lake/files/finance"})
    ac.create_object("topic files.finance.events", "olga")
    ac.create_role("readers")
    for cat in ("payroll", "legacy", "files"):
        ac.grant_privileges("readers", f"catalog {cat}", ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"])
    ac.grant_privileges("readers", "schema files.finance", ["READ_FILESET", "CONSUME_TOPIC"])
    ac.grant_role("readers", "user ann")
    ac.create_role("no_pay")
    ac.grant_privileges("no_pay", "table payroll.hr.salaries", ["SELECT_TABLE"], condition="DENY")
    ac.grant_role("readers", "user bob")
    ac.grant_role("no_pay", "user bob")
    ac.create_role("creators")
    ac.grant_privileges("creators", "metalake", ["CREATE_CATALOG", "USE_CATALOG"])
    for schema in ("payroll.team", "legacy.team", "files.team"):
        ac.grant_privileges(
            "creators",
            f"schema {schema}",
            ["USE_SCHEMA", "CREATE_TABLE", "CREATE_FILESET", "CREATE_TOPIC"],
        )
    ac.grant_privileges("creators", "catalog files", ["CREATE_SCHEMA"])
    ac.grant_role("creators", "user mallory")
    return ac


def decisions(model: Model, objects: list[ObjectRef]) -> set[tuple[str, str, str]]:
    ev = Evaluator(model)
    return {
        (user, op, str(obj))
        for user in OTHERS
        for obj in objects
        for op in OPS[obj.type.value]
        if ev.authorize(user, op, obj, explain=False).allowed
    }


def compiled(ac: AccessControl, objects: set[str]) -> dict[str, Any]:
    """Per backend, what it compiles for the other principals on ``objects``."""
    model = ac.model
    scope = Scope.everything().resolve(model)
    out: dict[str, Any] = {}
    for name in ("rec", "rg"):
        backend = ac.backends[name]
        facts = backend.compile(model, Snapshot(frozenset()), scope).facts
        out[name] = (
            backend.enforces(model),
            {f for f in facts if f.user != "mallory" and str(f.object) in objects},
        )
    my = ac.backends["my"]
    catalog = my.catalog(model)
    inventory = SERVER
    accounts = frozenset(Account(f"pd_{u}", "%") for u in USERS)
    facts = mysql_desired(model, catalog, inventory, accounts, AccountNaming(), scope).facts
    out["my"] = (my.enforces(model), {f for f in facts if "mallory" not in str(f)})
    desired = ranger_desired(
        model,
        sorted(ac.backends["rg"].enforces(model)),
        RangerNaming(),
        {"hive": True, "hdfs": True, "kafka": True},
        locations=ROOTS,
    )
    out["ranger"] = desired.facts
    return out


def attempt(ac: AccessControl, kind: str, which: int, name: str, props: dict[str, str]) -> str:
    parents = PARENTS[kind]
    ref = ObjectRef.of(kind, (*parents[which % len(parents)], name))
    try:
        ac.acting("mallory", via="rest").create_object(ref, properties=props)
    except BindingRefused:
        return "refused"
    except Forbidden:
        return "forbidden"
    except ModelError:
        return "invalid"
    return "made"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ATTEMPT, min_size=1, max_size=6))
def test_no_registration_changes_what_another_principal_may_do(
    attempts: list[tuple[str, int, str, dict[str, str]]],
) -> None:
    ac = estate()
    objects = sorted(ac.model.objects)
    names = {str(o) for o in objects}
    before, backends_before = decisions(ac.model, objects), compiled(ac, names)
    outcomes = [attempt(ac, *a) for a in attempts]
    model = ac.model
    assert decisions(model, objects) == before, outcomes
    after = compiled(ac, names)
    for name in ("rec", "rg", "my"):
        assert after[name] == backends_before[name], (name, outcomes)
    # Ranger: every policy and role of before is still there, unchanged (only new objects add)
    assert backends_before["ranger"] <= after["ranger"], (
        outcomes,
        backends_before["ranger"] - after["ranger"],
    )
    # no registration by the caller carries a binding the configuration did not make
    for obj, props in model.objects.items():
        if model.owners.get(obj) == "mallory":
            assert not any(k.casefold().strip() == "backend" for k in props), (obj, props)


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda ac: ac.create_object("catalog mine", properties={"backend": "rec"}), "configuration"),
        (lambda ac: ac.create_object("catalog mine", properties={"BACKEND": "my"}), "configuration"),
        (lambda ac: ac.create_object("catalog payroll2", properties={}), None),
        (lambda ac: ac.create_object("fileset files.team.f", properties={"location": "/finance"}), "outside"),
        (
            lambda ac: ac.create_object("fileset files.team.f", properties={"path": "/lake/files/finance/x"}),
            "another",
        ),
        (
            lambda ac: ac.create_object(
                "fileset files.team.f", properties={"location": "/lake/files/a/../b"}
            ),
            "'..'",
        ),
        (lambda ac: ac.create_object("topic files.team.Events"), "Kafka"),
    ],
)
def test_a_creator_only_caller_is_refused_each_binding_with_a_clear_message(
    make: Callable[[AccessControl], object], why: str | None
) -> None:
    ac = estate()
    mallory = ac.acting("mallory")
    if why is None:  # an unbound registration stays his to make
        make(mallory)
        return
    seq = ac.store.last_seq()
    with pytest.raises(BindingRefused, match=why):
        make(mallory)
    assert ac.store.last_seq() == seq


def test_the_administrator_binds_and_the_configuration_wins() -> None:
    ac = estate()
    ac.create_object("catalog extra", "olga", {"backend": "my"})  # a second catalog on the one server
    with pytest.raises(ConfigError, match="one catalog"):
        ac.backends["my"].catalog(ac.model)  # the admin's own mistake is reported, as before
    with pytest.raises(BindingRefused, match="exactly the catalogs its configuration names"):
        ac.create_object("catalog other", "olga", {"backend": "rec"})
    with pytest.raises(BindingRefused, match="outside"):
        ac.create_object("fileset files.team.g", "olga", {"location": "/elsewhere"})
    ac.create_object(
        "fileset files.team.g", "olga", {"location": "/lake/files/finance/inner"}
    )  # nested: admin's


@pytest.mark.parametrize(
    "locations",
    [["/lake"], {"files": "/lake"}, {"files": ["lake"]}, {"files": ["/lake/../x"]}, {"": ["/lake"]}],
)
def test_configured_locations_are_checked_when_the_file_is_loaded(locations: Any, tmp_path: Any) -> None:
    raw = {"backends": {"rg": {"kind": "recording", "catalogs": ["files"], "locations": locations}}}
    with pytest.raises(ConfigError, match="locations"):
        from_mapping(raw, tmp_path, "pushdown.toml")
    good = {
        "backends": {"rg": {"kind": "recording", "locations": {"files": ["/lake"], "*": ["hdfs://nn/x"]}}}
    }
    assert from_mapping(good, tmp_path, "pushdown.toml").backends["rg"].locations == {
        "files": ("/lake",),
        "*": ("hdfs://nn/x",),
    }


def test_ranger_pushes_no_location_outside_its_catalogs_roots_whatever_way_it_came() -> None:
    """An old store or a followed source may hold a location a caller chose: pushed for nobody."""
    ac = estate()
    model = copy.deepcopy(ac.model)
    for event in ch.create_object(
        model, ObjectRef.of("fileset", ("files", "team", "x")), "mallory", {"location": "/finance"}
    ):
        model.apply(event)
    deny = {"hive": True, "hdfs": True, "kafka": True}
    desired = ranger_desired(model, ["files"], RangerNaming(), deny, locations=ROOTS)
    paths = {f.resources for f in desired.facts if getattr(f, "service", None) == "hdfs"}
    assert (("path", ("/finance",), True),) not in paths
    assert (("path", ("/lake/files/finance",), True),) in paths
    assert any("files.team.x" in n and "outside" in n for n in desired.notes)
    unbounded = ranger_desired(model, ["files"], RangerNaming(), deny)  # no roots configured: as before
    assert (("path", ("/finance",), True),) in {
        f.resources for f in unbounded.facts if getattr(f, "service", None) == "hdfs"
    }


def test_a_topic_is_one_kafka_topic_with_a_topic_of_another_enforced_catalog() -> None:
    """``files.finance.events`` exists. mallory's ``events`` in catalog payroll (enforced by
    ``rec``, which enforces files too) would be that Kafka topic: refused; in catalog legacy
    (enforced by ``my`` alone) too, since two backends may name one Kafka service."""
    ac = estate()
    mallory = ac.acting("mallory")
    for name in ("topic payroll.team.EVENTS", "topic legacy.team.events"):
        with pytest.raises(BindingRefused, match="Kafka"):
            mallory.create_object(ObjectRef.parse(name))


def test_a_topic_where_a_backend_cannot_tell_is_refused_whatever_the_others_say() -> None:
    """A catalog enforced by Ranger (its Kafka service cannot tell whether a topic exists)
    and by a backend whose server holds no topics (its ``False`` says nothing about Kafka):
    a checked caller's topic is refused, as in a catalog Ranger alone enforces."""
    model = Model()
    topic = ObjectRef.parse("topic k.s.orders")
    ranger = ("ranger", frozenset({"k"}), lambda o: None)
    data = ("hive", frozenset({"k"}), lambda o: False)
    for servers in ([ranger], [data, ranger]):
        with pytest.raises(BindingRefused, match="can tell"):
            claimed(model, [ev.ObjectCreated(topic)], servers, "mallory")
    claimed(model, [ev.ObjectCreated(topic)], [data], "mallory")  # nobody enforces the topic


def test_two_enforced_catalogs_may_share_one_kafka_service() -> None:
    """Two Ranger backends, one per catalog, may name the same Kafka service: a topic named
    like another enforced catalog's but for case is refused; beside a catalog no backend
    enforces it is another topic."""
    model = Model()
    for text in ("catalog a", "schema a.s", "catalog b", "schema b.s", "catalog free", "schema free.s"):
        model.objects[ObjectRef.parse(text)] = {}
    model.objects[ObjectRef.parse("topic a.s.events")] = {}
    model.objects[ObjectRef.parse("topic free.s.orders")] = {}
    bindings = Bindings.of([("ranger_a", frozenset({"a"}), {}), ("ranger_b", frozenset({"b"}), {})])
    with pytest.raises(BindingRefused, match="Kafka"):
        check(
            model,
            [ev.ObjectCreated(ObjectRef.parse("topic b.s.EVENTS"))],
            bindings,
            administrator=False,
            user="m",
        )
    check(
        model,
        [ev.ObjectCreated(ObjectRef.parse("topic b.s.ORDERS"))],
        bindings,
        administrator=False,
        user="m",
    )
