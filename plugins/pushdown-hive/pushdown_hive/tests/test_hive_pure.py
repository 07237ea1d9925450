"""The Hive backend without a server: compile by operation, fence, batching, refusals,
findings, saved facts and the scope of a read, against a fake metastore."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace as Ns
from typing import Any

import pytest

from pushdown.errors import ConfigError, PermanentBackendError, TemporaryBackendError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_hive.backend import HiveBackend
from pushdown_hive.calls import table_info
from pushdown_hive.facts import USER, HiveGlobal, HiveGrant, HiveMember, fact_from_json
from pushdown_hive.metastore import Listed, Refused
from pushdown_hive.readback import server_scope
from tests.builders import ALLOW, DENY, Builder

from .fake import FakeMetastore


def world() -> tuple[Builder, FakeMetastore]:
    """Catalog c (backend hive1): schema s with tables a, b, secret; schema t with x."""
    b = Builder().users("alice", "bob", "carol").catalog("c", backend="hive1")
    b.schema("c.s").table("c.s.a").table("c.s.b").table("c.s.secret").schema("c.t").table("c.t.x")
    b.role(
        "reader",
        ("catalog c", "USE_CATALOG", ALLOW),
        ("catalog c", "USE_SCHEMA", ALLOW),
        ("schema c.s", "SELECT_TABLE", ALLOW),
        ("table c.s.secret", "SELECT_TABLE", DENY),
        users=["alice", "bob"],
    )
    ms = FakeMetastore({"s": {"a", "b", "secret"}, "t": {"x"}})
    return b, ms


def backend(ms: FakeMetastore, **settings: Any) -> HiveBackend:
    """Per-user grants only unless ``roles=True`` (the roles' own tests are below)."""
    base = {"grantor": "pushdown", "roles": False}
    return HiveBackend(BackendContext("hive1", {**base, **settings}), metastore=ms)


def g(user: str, db: str, table: str | None, privilege: str) -> HiveGrant:
    return HiveGrant(USER, user, db, table, privilege)


def test_a_schema_allow_is_expanded_to_the_tables_held_minus_the_denied() -> None:
    b, ms = world()
    reconcile(backend(ms), b.model, Scope.everything())
    assert set(ms.held) == {g(u, "s", t, "SELECT") for u in ("alice", "bob") for t in ("a", "b")}


def test_owner_gets_all_and_create_table_gets_create_on_the_database() -> None:
    b, ms = world()
    b.owner("schema c.s", "carol").role("gate", ("catalog c", "USE_CATALOG", ALLOW), users=["carol"])
    reconcile(backend(ms), b.model, Scope.everything())
    carol = {x for x in ms.held if x.principal == "carol"}
    assert carol == {g("carol", "s", None, "CREATE")} | {
        g("carol", "s", t, "ALL") for t in ("a", "b", "secret")
    }


def test_without_the_gates_nothing_is_granted() -> None:
    b, ms = world()
    b.revoke("reader", "catalog c", ["USE_CATALOG"])
    plan, _ = reconcile(backend(ms), b.model, Scope.everything())
    assert plan.empty and not ms.held


def test_many_privileges_go_in_one_call_and_batch_size_bounds_it() -> None:
    b, ms = world()
    reconcile(backend(ms), b.model, Scope.everything())
    assert ms.calls("grant_privileges") == [4]
    b2, ms2 = world()
    reconcile(backend(ms2, batch_size=3), b2.model, Scope.everything())
    assert ms2.calls("grant_privileges") == [3, 1]


def test_a_revoke_goes_out_in_one_call_and_a_plan_after_apply_is_empty() -> None:
    b, ms = world()
    hive = backend(ms)
    reconcile(hive, b.model, Scope.everything())
    b.revoke("reader", "schema c.s", ["SELECT_TABLE"])
    plan, applied = reconcile(hive, b.model, Scope.everything())
    assert applied and plan.removes == 4 and ms.calls("revoke_privileges") == [4]
    assert not ms.held and planner.plan(hive, b.model, Scope.everything()).empty


def test_one_refused_privilege_does_not_stop_the_others() -> None:
    b, ms = world()
    ms.refuse = {g("bob", "s", "b", "SELECT")}
    with pytest.raises(
        PermanentBackendError,
        match=r"refused to grant SELECT ON TABLE `s.b` TO USER `bob`: Internal error.*already holds",
    ):
        reconcile(backend(ms), b.model, Scope.everything())
    assert set(ms.held) == {
        g("alice", "s", "a", "SELECT"),
        g("alice", "s", "b", "SELECT"),
        g("bob", "s", "a", "SELECT"),
    }


def test_grants_by_other_hands_are_findings_never_removed_nor_granted_again() -> None:
    b, ms = world()
    mine = g("alice", "s", "a", "SELECT")  # the model wants it; the table's owner granted it
    wider = g("bob", "s", "secret", "SELECT")  # denied by the model
    for x in (mine, wider):
        ms.held[x] = Listed(x, "etl", "USER", True)
    hive = backend(ms)
    plan, _ = reconcile(hive, b.model, Scope.everything())
    assert mine not in {op.fact for op in plan.ops} and ms.held[mine].grantor == "etl"
    assert wider in ms.held and ms.calls("revoke_privileges") == []
    findings = planner.plan(hive, b.model, Scope.everything()).findings
    assert any("SELECT ON TABLE `s.secret` TO USER `bob`" in f and "'etl'" in f for f in findings)


def test_a_grant_by_a_role_named_like_the_grantor_is_not_ours() -> None:
    b, ms = world()
    wider = g("bob", "s", "secret", "SELECT")
    ms.held[wider] = Listed(wider, "pushdown", "ROLE", False)
    hive = backend(ms)
    reconcile(hive, b.model, Scope.everything())
    assert wider in ms.held and ms.calls("revoke_privileges") == []
    assert any(
        "granted by ROLE 'pushdown'" in f for f in planner.plan(hive, b.model, Scope.everything()).findings
    )


def test_manage_foreign_grants_takes_them_over() -> None:
    b, ms = world()
    wider = g("bob", "s", "secret", "SELECT")
    ms.held[wider] = Listed(wider, "etl", "USER", False)
    reconcile(backend(ms, manage_foreign_grants=True), b.model, Scope.everything())
    assert wider not in ms.held


def test_a_grant_to_a_user_the_model_lost_is_revoked_only_when_ours() -> None:
    b, ms = world()
    ours, theirs = g("zed", "s", "a", "SELECT"), g("zed", "s", "b", "SELECT")
    ms.held[ours] = Listed(ours, "pushdown", "USER")
    ms.held[theirs] = Listed(theirs, "root", "USER")
    reconcile(backend(ms), b.model, Scope.everything())
    assert ours not in ms.held and theirs in ms.held


def test_a_table_scope_reads_one_table_and_its_database() -> None:
    b, ms = world()
    hive = backend(ms)
    reconcile(hive, b.model, Scope.everything())
    ms.dbs["s"].add("new")
    b.table("c.s.new")
    ms.log.clear()
    plan, _ = reconcile(hive, b.model, Scope.of([ObjectRef.parse("table c.s.new")]))
    assert {op.fact for op in plan.ops} == {g("alice", "s", "new", "SELECT"), g("bob", "s", "new", "SELECT")}
    names = [name for name, _ in ms.log]
    # the table and its database, the server, then the table read back
    assert names.count("list_privileges") == 4
    # and get_role_names (the roles' fence is read even with roles = false), the admin role's
    # holders, the database's owner, and the table by name (its owner and columns: one
    # call for whether it exists and for the hand-made state; never get_all_tables)
    assert len(names) == 10 and "get_all_tables" not in names
    assert names.count("get_database") == 1
    assert names.count("get_table_objects_by_name") == 1
    assert names.count("grant_privileges") == 1


def test_a_table_read_by_name_that_the_metastore_refuses_falls_back_to_the_database_list() -> None:
    """The read asks the scope's tables by name; a refusal of that call (whatever the
    name) does not leave the database unread (nothing granted or revoked on it): the
    database's table list is read instead, as before, and the sync converges."""

    class Picky(FakeMetastore):
        def table_infos(self, db: str, tables: Any) -> Any:
            if any(t == "new" for t in tables):
                self._call("get_table_objects_by_name")
                raise Refused("InvalidOperationException: a name it does not take")
            return super().table_infos(db, tables)

    b, plain = world()
    ms = Picky(plain.dbs)
    hive = backend(ms)
    reconcile(hive, b.model, Scope.everything())
    ms.dbs["s"].add("new")
    b.table("c.s.new")
    plan, _ = reconcile(hive, b.model, Scope.of([ObjectRef.parse("table c.s.new")]))
    assert {op.fact for op in plan.ops} == {g("alice", "s", "new", "SELECT"), g("bob", "s", "new", "SELECT")}
    assert "get_all_tables" in [name for name, _ in ms.log[-12:]]
    assert not plan.findings, plan.findings


def test_server_scope_narrows_to_databases_and_tables() -> None:
    b, _ = world()
    where = Scope.of([ObjectRef.parse("table c.s.a"), ObjectRef.parse("schema c.t")]).resolve(b.model)
    assert server_scope(where, "c").databases == {"s": frozenset({"a"}), "t": None}
    assert server_scope(Scope.everything().resolve(b.model), "c").databases is None
    assert server_scope(where, None).databases == {}


def test_discovery_finds_a_table_created_by_other_hands() -> None:
    b, ms = world()
    hive = backend(ms)
    _, seen = hive.discover(b.model, None)
    ms.dbs["t"].add("y")
    scope, _ = hive.discover(b.model, seen)
    assert scope.objects == {ObjectRef.parse("schema c.t")}


def test_the_metastore_gone_mid_apply_is_a_clear_temporary_error_and_the_next_sync_converges() -> None:
    b, ms = world()
    hive = backend(ms, batch_size=1)
    # the read (10 calls, then the admin role's holders, the server's grants, the two
    # databases' owners and their tables) and two grants answer, then it stops
    ms.alive = 18
    with pytest.raises(TemporaryBackendError, match=r"did not answer while granting .* nothing is lost"):
        reconcile(hive, b.model, Scope.everything(), retries=0)
    assert len(ms.held) == 2
    ms.alive = None
    reconcile(hive, b.model, Scope.everything())
    assert len(ms.held) == 4 and planner.plan(hive, b.model, Scope.everything()).empty


def test_saved_facts_round_trip_and_bad_ones_are_clear_errors() -> None:
    fact = g("alice", "s", None, "CREATE")
    assert fact_from_json(fact.to_json()) == fact
    server = HiveGlobal("USER", "alice", "SELECT")
    assert fact_from_json(server.to_json()) == server
    # the modifiers are part of a fact, and of its saved form
    option = replace(g("alice", "s", "a", "SELECT"), grant_option=True)
    assert fact_from_json(option.to_json()) == option != g("alice", "s", "a", "SELECT")
    admin = HiveMember("pd_reader", "alice", admin=True)
    assert fact_from_json(admin.to_json()) == admin != HiveMember("pd_reader", "alice")
    assert str(option).endswith("WITH GRANT OPTION") and str(admin).endswith("WITH ADMIN OPTION")
    _, ms = world()
    with pytest.raises(ConfigError, match="not a saved Hive grant"):
        backend(ms).fact_from_json({"grant": [1]})


@pytest.mark.parametrize(
    "settings",
    [
        {"batch_size": 0},
        {"port": "x"},
        {"port": 70000},  # the socket would wrap it to port 4464
        {"manage_foreign_grants": "perhaps"},
        {"timeout": "soon"},
        {"timeout": -1},
        {"role_prefix": "a"},  # would take in (and drop) the metastore's admin role
        {"role_prefix": "P"},
    ],
)
def test_bad_settings_are_clear_errors(settings: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="setting"):
        HiveBackend(BackendContext("hive1", settings), metastore=FakeMetastore())


def test_users_mapped_to_one_name_get_nothing() -> None:
    b, ms = world()
    context = BackendContext("hive1", {}, map_principal=lambda p: "same")
    plan, _ = reconcile(HiveBackend(context, metastore=ms), b.model, Scope.everything())
    assert not ms.held and any("all map to metastore user 'same'" in n for n in plan.notes)


# -- model roles as metastore roles, where exact ----------------------------------------


def role_grant(role: str, db: str, table: str | None, privilege: str) -> HiveGrant:
    return HiveGrant("ROLE", "pd_" + role, db, table, privilege)


def test_a_role_whose_holders_all_agree_is_a_metastore_role() -> None:
    b, ms = world()
    plan, _ = reconcile(backend(ms, roles=True), b.model, Scope.everything())
    assert set(ms.held) == {role_grant("reader", "s", t, "SELECT") for t in ("a", "b")}
    assert ms.roles["pd_reader"] == {"alice", "bob"}
    assert not [n for n in plan.notes if n.startswith("role reader")]


def test_where_a_holder_differs_the_role_carries_less_and_the_rest_is_per_user() -> None:
    b, ms = world()
    b.role("blocker", ("table c.s.a", "SELECT_TABLE", DENY), users=["bob"])
    hive = backend(ms, roles=True)
    plan, _ = reconcile(hive, b.model, Scope.everything())
    assert set(ms.held) == {role_grant("reader", "s", "b", "SELECT"), g("alice", "s", "a", "SELECT")}
    assert any(n.startswith("role reader: 1 grant(s)") for n in plan.notes)
    # bob loses the blocker: a scope of bob's alone also recomputes the role and alice
    b.do(ch.revoke_role, "blocker", Principal.user("bob"))
    reconcile(hive, b.model, Scope.of(principals=[Principal.user("bob"), Principal.role("blocker")]))
    assert set(ms.held) == {role_grant("reader", "s", t, "SELECT") for t in ("a", "b")}
    assert planner.plan(hive, b.model, Scope.everything()).empty


def test_a_role_without_holders_is_dropped_with_what_it_carried() -> None:
    b, ms = world()
    hive = backend(ms, roles=True)
    reconcile(hive, b.model, Scope.everything())
    for user in ("alice", "bob"):
        b.do(ch.revoke_role, "reader", Principal.user(user))
    reconcile(hive, b.model, Scope.of(principals=[Principal.user("alice"), Principal.user("bob")]))
    assert "pd_reader" not in ms.roles and not ms.held
    assert planner.plan(hive, b.model, Scope.everything()).empty


def test_roles_by_other_prefixes_are_left_alone() -> None:
    b, ms = world()
    ms.roles["etl_admins"] = {"alice"}
    reconcile(backend(ms, roles=True), b.model, Scope.everything())
    assert ms.roles["etl_admins"] == {"alice"} and "admin" in ms.roles


def test_a_role_out_of_play_keeps_what_it_carries_for_a_widened_holder() -> None:
    b, ms = world()
    b.role("extra", ("table c.s.a", "MODIFY_TABLE", ALLOW), users=["alice"])
    hive = backend(ms, roles=True)
    reconcile(hive, b.model, Scope.everything())
    assert role_grant("extra", "s", "a", "INSERT") in ms.held
    # bob alone changes; alice is widened in (she holds reader), her role extra is not in play
    b.role("blocker", ("table c.s.b", "SELECT_TABLE", DENY), users=["bob"])
    reconcile(hive, b.model, Scope.of(principals=[Principal.user("bob"), Principal.role("blocker")]))
    assert planner.plan(hive, b.model, Scope.everything()).empty
    assert role_grant("extra", "s", "a", "INSERT") in ms.held and g("alice", "s", "b", "SELECT") in ms.held


def test_a_model_name_with_capitals_never_widens_the_lower_case_object() -> None:
    b, ms = world()
    b.table("c.s.Secret2").deny("reader", "table c.s.Secret2", "SELECT_TABLE")
    ms.dbs["s"].add("secret2")  # the metastore keeps the name in lower case
    plan, _ = reconcile(backend(ms), b.model, Scope.everything())
    assert not [x for x in ms.held if x.table == "secret2"]
    assert any("table c.s.Secret2 has capitals" in n for n in plan.notes)


def test_a_refused_revoke_from_a_role_holds_back_its_new_holder() -> None:
    b, ms = world()
    hive = backend(ms, roles=True)
    reconcile(hive, b.model, Scope.everything())
    # carol joins reader, but may not read s.b: the role must stop carrying it first
    b.role("blocker", ("table c.s.b", "SELECT_TABLE", DENY), users=["carol"])
    b.do(ch.grant_role, "reader", Principal.user("carol"))
    ms.refuse = {role_grant("reader", "s", "b", "SELECT")}
    with pytest.raises(PermanentBackendError, match="not sent: ROLE `pd_reader` TO USER `carol`"):
        reconcile(hive, b.model, Scope.everything())
    assert "carol" not in ms.roles["pd_reader"]
    assert "SELECT" not in ms.privilege_set("s", "b", "carol", [])


def test_a_refused_role_revoke_holds_back_what_the_role_would_carry() -> None:
    b, ms = world()
    b.role("blocker", ("table c.s.b", "SELECT_TABLE", DENY), users=["bob"])
    hive = backend(ms, roles=True)
    reconcile(hive, b.model, Scope.everything())
    # bob leaves reader: the role could carry s.b again, but the metastore keeps bob in it
    b.do(ch.revoke_role, "reader", Principal.user("bob"))
    real = ms.revoke_role

    def refuse(role: str, user: str) -> None:
        from pushdown_hive.metastore import Refused

        raise Refused(f"Internal error processing revoke_role ({role}, {user})")

    ms.revoke_role = refuse  # type: ignore[method-assign]
    with pytest.raises(PermanentBackendError, match=r"not sent: SELECT ON TABLE `s\.b` TO ROLE `pd_reader`"):
        reconcile(hive, b.model, Scope.everything())
    assert "SELECT" not in ms.privilege_set("s", "b", "bob", [])
    ms.revoke_role = real  # type: ignore[method-assign]
    reconcile(hive, b.model, Scope.everything())
    assert planner.plan(hive, b.model, Scope.everything()).empty


def test_a_read_the_metastore_refuses_is_a_clear_error() -> None:
    b, ms = world()

    def gone(role: str) -> list[tuple[str, str]]:
        from pushdown_hive.metastore import Refused

        raise Refused(f"NoSuchObjectException: role {role} does not exist")  # dropped meanwhile

    ms.roles["pd_old"] = set()
    ms.members = gone  # type: ignore[method-assign]
    with pytest.raises(TemporaryBackendError, match="refused a read while reading its roles"):
        reconcile(backend(ms, roles=True), b.model, Scope.everything(), retries=0)


def test_when_no_catalog_names_the_backend_what_it_granted_is_revoked() -> None:
    b, ms = world()
    ours = Listed(g("zed", "t", "x", "SELECT"), "etl", "USER")  # by other hands: stays
    ms.held[ours.grant] = ours
    hive = backend(ms, roles=True)
    reconcile(hive, b.model, Scope.everything())
    assert len(ms.held) == 3 and "pd_reader" in ms.roles
    b.do(ch.drop_object, ObjectRef.parse("catalog c"))
    plan, _ = reconcile(hive, b.model, Scope.everything(), allow_mass_removal=True)
    assert "every managed grant is revoked" in plan.notes[0]
    assert set(ms.held) == {ours.grant} and "pd_reader" not in ms.roles
    assert planner.plan(hive, b.model, Scope.everything()).empty


def test_a_grant_by_other_hands_to_a_managed_role_is_a_finding() -> None:
    b, ms = world()
    hive = backend(ms, roles=True)
    reconcile(hive, b.model, Scope.everything())
    wider = role_grant("reader", "s", "secret", "SELECT")  # every holder of the role gets it
    ms.held[wider] = Listed(wider, "admin", "USER")
    findings = planner.plan(hive, b.model, Scope.everything()).findings
    assert any("TO ROLE `pd_reader`" in f and "'admin'" in f for f in findings), findings


def test_roles_false_drops_the_managed_roles_an_earlier_configuration_left() -> None:
    b, ms = world()
    reconcile(backend(ms, roles=True), b.model, Scope.everything())
    assert "pd_reader" in ms.roles
    reconcile(backend(ms), b.model, Scope.everything())
    assert "pd_reader" not in ms.roles and not any(g.principal_type == "ROLE" for g in ms.held)
    assert ms.privilege_set("s", "a", "alice", []) == {"SELECT"}


def test_a_managed_role_held_by_a_group_is_revoked() -> None:
    b, ms = world()
    hive = backend(ms, roles=True)
    reconcile(hive, b.model, Scope.everything())
    real = ms.members

    def members(role: str) -> list[tuple[str, str, bool]]:
        return real(role) + ([("GROUP", "contractors", False)] if role == "pd_reader" else [])

    ms.members = members  # type: ignore[method-assign]
    plan = planner.plan(hive, b.model, Scope.everything())
    assert [str(op) for op in plan.ops] == ["- ROLE `pd_reader` TO GROUP `contractors`"]


def test_without_a_fence_a_membership_pushdown_gave_is_revoked_and_read_back_alone() -> None:
    """``role_prefix = ""`` (no fence): a role pushdown made earlier (owned by its grantor)
    holds alice through pushdown's grant, and a DBA's SELECT on s.secret reaches her
    through it. The full sync revokes that one membership, reads back only that role, and
    never takes another team's role (granted by someone else) for its own."""
    b, ms = world()
    ms.create_role("pd_reader", "pushdown")
    ms.grant_role("pd_reader", "alice", "pushdown")
    ms.create_role("team_x", "ops")
    for user in ("zed", "yan"):
        ms.grant_role("team_x", user, "ops")
    dba = HiveGrant("ROLE", "pd_reader", "s", "secret", "SELECT")
    ms.held[dba] = Listed(dba, "dba", "USER")
    plan, _ = reconcile(backend(ms, role_prefix=""), b.model, Scope.everything())
    assert "- ROLE `pd_reader` TO USER `alice`" in [str(op) for op in plan.ops]
    assert ms.roles["pd_reader"] == set() and ms.roles["team_x"] == {"zed", "yan"}
    assert not any("team_x" in str(op) for op in plan.ops)


def test_two_catalogs_naming_the_backend_revoke_everything_with_a_note() -> None:
    b, ms = world()
    reconcile(backend(ms), b.model, Scope.everything())
    assert ms.held
    b.catalog("d", backend="hive1")
    plan, _ = reconcile(backend(ms), b.model, Scope.everything(), allow_mass_removal=True)
    assert any("one metastore enforces one catalog" in n for n in plan.notes), plan.notes
    assert not ms.held


def test_a_table_dropped_while_it_is_read_does_not_stop_the_revokes() -> None:
    b, ms = world()
    reconcile(backend(ms), b.model, Scope.everything())
    b.role("deny_all", ("catalog c", "SELECT_TABLE", DENY), users=["alice"])
    real = ms.grants_on

    def grants_on(db: str, table: str | None) -> list[Listed]:
        if table == "b":
            raise Refused("NoSuchObjectException: table s.b dropped")
        return real(db, table)

    ms.grants_on = grants_on  # type: ignore[method-assign]
    plan, _ = reconcile(backend(ms), b.model, Scope.everything())
    assert g("alice", "s", "a", "SELECT") not in ms.held
    assert any("s.b" in f and "refused" in f for f in plan.findings), plan.findings


def test_users_whose_names_are_one_once_case_is_folded_get_nothing() -> None:
    b, ms = world()
    b.users("Alice")  # alice reads schema s; Alice holds nothing
    plan, _ = reconcile(backend(ms), b.model, Scope.everything())
    assert not [x for x in ms.held if x.principal in ("alice", "Alice")], ms.held
    assert any("Alice, alice" in n for n in plan.notes), plan.notes


def test_roles_whose_names_are_one_once_case_is_folded_carry_nothing() -> None:
    b, ms = world()
    b.role("Reader", users=["alice"])  # pd_Reader and pd_reader: one role on a case-blind database
    plan, _ = reconcile(backend(ms, roles=True), b.model, Scope.everything())
    assert not [r for r in ms.roles if r.lower() == "pd_reader"]
    assert {x for x in ms.held if x.principal == "alice"} == {
        g("alice", "s", t, "SELECT") for t in ("a", "b")
    }
    assert any("once case is folded" in n for n in plan.notes), plan.notes


def test_removing_one_of_two_users_sharing_a_name_gives_the_other_its_grants_in_the_scoped_sync() -> None:
    from pushdown.reconcile.scope import scope_of

    b, ms = world()
    context = BackendContext("hive1", {"grantor": "pushdown", "roles": False})
    context.map_principal = lambda p: "shared" if p.name in ("alice", "carol") else p.name
    hive = HiveBackend(context, metastore=ms)
    reconcile(hive, b.model, Scope.everything())
    assert not [x for x in ms.held if x.principal == "shared"]
    events = ch.remove_user(b.model, "carol")
    for event in events:
        b.model.apply(event)
    reconcile(hive, b.model, Scope.union(scope_of(e) for e in events))
    assert {x for x in ms.held if x.principal == "shared"} == {
        g("shared", "s", t, "SELECT") for t in ("a", "b")
    }


def test_a_tables_columns_are_its_storage_columns_then_its_partition_columns() -> None:
    """``table_info`` lists every column a grant can name: ``sd.cols``, then
    ``partitionKeys`` (each once); a table without either (a view, a hostile answer)
    lists what it has. The Thrift table is stood in by its attributes."""

    def cols(names: list[str]) -> list[Any]:
        return [Ns(name=n, type="string") for n in names]

    def table(name: str, sd: list[str] | None, keys: list[str] | None) -> Any:
        storage = None if sd is None else Ns(cols=cols(sd))
        return Ns(
            tableName=name,
            owner="o",
            ownerType=None,
            parameters=None,
            sd=storage,
            partitionKeys=None if keys is None else cols(keys),
        )

    assert table_info(table("t", ["id", "v"], ["day", "id"])).columns == ("id", "v", "day")
    assert table_info(table("p", None, ["day"])).columns == ("day",)
    assert table_info(table("w", ["id"], None)).columns == ("id",)


# -- the one-table sync's caches and its read by name: never wider, a scoped sync as a full one


def synced_as_full(hive: HiveBackend, b: Builder, *changes: tuple[Any, ...]) -> None:
    """Apply ``changes`` (a function of :mod:`pushdown.model.changes` and its arguments
    after the model, each) as one batch, sync the batch's scope, and check that a full
    sync then plans nothing (the scoped sync reached what a full one would)."""
    from pushdown.reconcile.scope import scope_of

    events = []
    for change, *args in changes:
        made = change(b.model, *args)
        for event in made:
            b.model.apply(event)
        events += made
    reconcile(hive, b.model, Scope.union(scope_of(e) for e in events))
    assert planner.plan(hive, b.model, Scope.everything()).empty


def test_a_role_created_and_deleted_in_one_batch_leaves_the_metastore_as_a_full_sync() -> None:
    """The roles the model no longer has are kept with the model object and its roster
    count: a role gone and another come in one batch (the count of roles unchanged) is
    still gone from the metastore, and the new one is made."""
    b, ms = world()
    hive = backend(ms, roles=True)
    reconcile(hive, b.model, Scope.everything())
    assert "pd_reader" in ms.roles
    synced_as_full(hive, b, (ch.delete_role, "reader"), (ch.create_role, "reader2"))
    assert "pd_reader" not in ms.roles and not ms.held
    # and back again under the old name, with the same roster count as two syncs ago
    synced_as_full(hive, b, (ch.delete_role, "reader2"), (ch.create_role, "reader"))
    assert "pd_reader2" not in ms.roles


def test_a_role_deleted_whose_own_sync_never_ran_is_dropped_by_the_next_sync_of_another_scope() -> None:
    """The roles gone from the model are kept with the model object and its roster count:
    a role deleted after a sync (its own sync failed, or never ran) is dropped, with what
    it carried, by the next sync of the same model object in any scope."""
    b, ms = world()
    b.role("extra", ("table c.s.a", "MODIFY_TABLE", ALLOW), users=["alice"])
    hive = backend(ms, roles=True)
    reconcile(hive, b.model, Scope.everything())
    reconcile(hive, b.model, Scope.of([ObjectRef.parse("table c.t.x")]))  # the same model, kept
    assert role_grant("extra", "s", "a", "INSERT") in ms.held
    for event in ch.delete_role(b.model, "extra"):
        b.model.apply(event)
    reconcile(hive, b.model, Scope.of([ObjectRef.parse("table c.t.x")]))
    assert "pd_extra" not in ms.roles and not [x for x in ms.held if x.principal == "pd_extra"], ms.held
    assert planner.plan(hive, b.model, Scope.everything()).empty


def test_two_backends_with_other_role_prefixes_share_no_case_twins_answer() -> None:
    """The case twins of the model's roles are kept once per process (the last model, its
    roster count and the prefix): two backends of other prefixes on one model alternate
    and each still finds the twins (neither metastore holds either twin)."""
    b, ms1 = world()
    ms2 = FakeMetastore({db: set(ts) for db, ts in ms1.dbs.items()})
    b.role("Reader", users=["alice"])
    one, two = backend(ms1, roles=True), backend(ms2, roles=True, role_prefix="x_")
    for _ in range(2):
        reconcile(one, b.model, Scope.everything())
        reconcile(two, b.model, Scope.everything())
    assert not [r for r in ms1.roles if r.lower() == "pd_reader"], ms1.roles
    assert not [r for r in ms2.roles if r.lower() == "x_reader"], ms2.roles
    # the twin goes: the count moves, the other one is made on both
    for event in ch.delete_role(b.model, "Reader"):
        b.model.apply(event)
    reconcile(one, b.model, Scope.everything())
    reconcile(two, b.model, Scope.everything())
    assert "pd_reader" in ms1.roles and "x_reader" in ms2.roles


def test_a_user_gone_and_another_come_in_one_batch_is_seen_by_the_scoped_sync() -> None:
    """The users' metastore names are kept per kept identity and with the roster count:
    one user removed and one added in one batch (as many users as before) grants the new
    one and revokes the old one's, as a full sync would."""
    b, ms = world()
    hive = backend(ms)
    reconcile(hive, b.model, Scope.everything())
    synced_as_full(
        hive,
        b,
        (ch.remove_user, "bob"),
        (ch.add_user, "dave"),
        (ch.grant_role, "reader", Principal.user("dave")),
    )
    assert {x.principal for x in ms.held} == {"alice", "dave"}


def test_a_user_gone_and_a_case_twin_come_unsynced_are_seen_by_the_next_table_sync() -> None:
    """A table-level sync maps no user afresh (its scope names none): the kept users stand
    only while the model object's roster count does. One user removed and a case twin of
    another added (as many users as before), whose own sync never ran: the next sync of a
    table sees the clash (``Alice`` and ``alice`` are one metastore user: neither holds
    anything there), as a full sync would (which also takes alice's grant on ``b``)."""
    b, ms = world()
    context = BackendContext("hive1", {"grantor": "pushdown", "roles": False})
    context.mapping_stable = lambda: True  # no hook: the kept names are trusted
    hive = HiveBackend(context, metastore=ms)
    reconcile(hive, b.model, Scope.everything())
    reconcile(hive, b.model, Scope.of([ObjectRef.parse("table c.s.a")]))  # the same model, kept
    for change, *args in ((ch.remove_user, "carol"), (ch.add_user, "Alice")):
        for event in change(b.model, *args):
            b.model.apply(event)
    reconcile(hive, b.model, Scope.of([ObjectRef.parse("table c.s.a")]))
    assert {x.principal for x in ms.held if x.table == "a"} == {"bob"}, ms.held
    assert not [
        op
        for op in planner.plan(hive, b.model, Scope.everything()).ops
        if getattr(op.fact, "table", None) == "a"
    ]


@pytest.mark.parametrize("hand", ["dropped", "created", "missing"])
def test_a_table_scope_against_a_table_changed_by_hand_is_a_full_sync(hand: str) -> None:
    """A table-level sync reads its table by name: a table the metastore lacks (never
    made, or dropped by hand since the last sync) gets nothing and its grants are not
    kept; one created by hand under the model's name is granted: as a full sync."""
    b, ms = world()
    hive = backend(ms)
    if hand == "missing":
        b.table("c.s.ghost")  # in the model, never in the metastore
    reconcile(hive, b.model, Scope.everything())
    if hand == "dropped":
        ms.dbs["s"].discard("a")
        ms.held = {x: v for x, v in ms.held.items() if x.table != "a"}
    name = {"dropped": "a", "created": "new", "missing": "ghost"}[hand]
    if hand == "created":
        ms.dbs["s"].add("new")
        b.table("c.s.new")
    reconcile(hive, b.model, Scope.of([ObjectRef.parse(f"table c.s.{name}")]))
    granted = {x for x in ms.held if x.table == name}
    assert granted == ({g(u, "s", "new", "SELECT") for u in ("alice", "bob")} if hand == "created" else set())
    assert planner.plan(hive, b.model, Scope.everything()).empty


def test_a_table_scope_names_the_table_in_lower_case_whatever_the_model_spells() -> None:
    """Hive folds case: the by-name read asks the metastore's (lower-case) name, so a model
    table ``A`` never reaches the metastore's ``a`` (a DENY on ``A`` never lost, nothing on
    ``a`` granted through ``A``)."""
    b, ms = world()
    b.table("c.s.A").deny("reader", "table c.s.A", "SELECT_TABLE")
    hive = backend(ms)
    reconcile(hive, b.model, Scope.everything())
    full = set(ms.held)
    reconcile(hive, b.model, Scope.of([ObjectRef.parse("table c.s.A")]))
    assert set(ms.held) == full
    assert planner.plan(hive, b.model, Scope.everything()).empty


def test_leads_by_the_index_is_leads_by_the_roles_grants() -> None:
    """:func:`pushdown_hive.roles.leads` looks the role's ALLOWs up in the model's index of
    the grants on each object: the same answer as a pass over the role's own grants, for
    grants on the metalake, the catalog, a schema and a table, ALLOW and DENY, in this
    catalog and another one."""
    from pushdown.model.privileges import Condition
    from pushdown_hive.roles import LEADS_TO, leads

    b, _ = world()
    b.catalog("d", backend="hive1").schema("d.s").table("d.s.a")
    b.role(
        "mixed",
        ("metalake", "USE_CATALOG", ALLOW),
        ("catalog c", "MODIFY_TABLE", ALLOW),
        ("schema c.t", "SELECT_TABLE", DENY),
        ("schema c.s", "CREATE_TABLE", ALLOW),
        ("table c.s.a", "SELECT_TABLE", DENY),
        ("table c.s.b", "SELECT_TABLE", ALLOW),
        ("schema d.s", "SELECT_TABLE", ALLOW),
        users=["carol"],
    )
    b.role("denier", ("schema c.t", "SELECT_TABLE", DENY), ("catalog d", "MODIFY_TABLE", DENY), users=["bob"])
    model = b.model
    privileges = sorted(LEADS_TO)
    triples = [
        (db, table, p)
        for db, tables in {"s": ("a", "b", "secret", None), "t": ("x", None)}.items()
        for table in tables
        for p in privileges
    ]

    def by_grants(role: str, catalog: str, triple: Any) -> bool:
        db, table, privilege = triple
        obj = ObjectRef.parse(f"schema {catalog}.{db}" if table is None else f"table {catalog}.{db}.{table}")
        return any(
            gr.condition is Condition.ALLOW
            and gr.object in obj.path
            and gr.privilege in LEADS_TO.get(privilege, ())
            for gr in model.roles[role]
        )

    seen = set()
    for role in model.roles:
        for catalog in ("c", "d"):
            lead = leads(model, role, catalog)
            for triple in triples:
                assert lead(triple) == by_grants(role, catalog, triple), (role, catalog, triple)
                seen.add(lead(triple))
    assert seen == {True, False}
