"""The MySQL plugin's pure parts, without a server: statements and read-back parsers."""

from __future__ import annotations

from dataclasses import replace

from pushdown.reconcile.plan import add, remove
from pushdown_mysql.compile import ServerObjects
from pushdown_mysql.facts import Account, Grant, RoleGrant, escape_db_pattern, exact_db_name, fact_from_json
from pushdown_mysql.findings import mandatory_findings
from pushdown_mysql.readback import (
    Dialect,
    ServerRead,
    ServerRegion,
    dialect_of,
    parse_db,
    parse_dynamic,
    parse_inventory,
    parse_mandatory,
    parse_roles,
    parse_tables,
    parse_users,
)
from pushdown_mysql.statements import MAX_ACCOUNTS, statements

ANN, BOB, CY = Account("pd_ann", "%"), Account("pd_bob", "%"), Account("pd_cy", "%")
MARIADB = dialect_of("10.11.6-MariaDB-0+deb12u1")


def test_accounts_that_get_the_same_privileges_share_one_grant() -> None:
    ops = [add(Grant(a, "crm", "orders", p)) for a in (ANN, BOB) for p in ("SELECT", "INSERT")]
    ops += [add(Grant(CY, "crm", "orders", "SELECT")), remove(Grant(CY, "crm", "old", "DROP"))]
    done = statements(ops)
    assert [s.display() for s in done] == [
        "REVOKE DROP ON `crm`.`old` FROM 'pd_cy'@'%'",  # narrowing first
        "GRANT SELECT, INSERT ON `crm`.`orders` TO 'pd_ann'@'%', 'pd_bob'@'%'",
        "GRANT SELECT ON `crm`.`orders` TO 'pd_cy'@'%'",
    ]
    assert sum(s.ops for s in done) == len(ops)
    assert [s.display() for s in done[1].split()] == [
        "GRANT SELECT, INSERT ON `crm`.`orders` TO 'pd_ann'@'%'",
        "GRANT SELECT, INSERT ON `crm`.`orders` TO 'pd_bob'@'%'",
    ]


def test_many_accounts_are_chunked_and_identifiers_quoted() -> None:
    accounts = [Account(f"pd_u{i:03d}", "%") for i in range(MAX_ACCOUNTS + 1)]
    done = statements([add(Grant(a, "we`ird", None, "SELECT")) for a in accounts])
    assert len(done) == 2 and all("ON `we``ird`.*" in s.template for s in done)
    assert all("pd_u" not in s.template for s in done)  # account names are parameters, never spliced


def test_role_grants_are_statements_of_their_own() -> None:
    done = statements([remove(RoleGrant(ANN, "hand made"))])
    assert [s.display() for s in done] == ["REVOKE `hand made` FROM 'pd_ann'@'%'"]
    assert done[0].revoking


def test_read_back_rows_normalise_to_facts() -> None:
    columns = MARIADB.user_columns()
    flags = ["Y" if name == "SELECT" else "N" for _, name in columns]
    rows = [("pd_ann", "%", "N", *flags), ("r", "", "Y", *["N"] * len(flags))]
    accounts, roles, grants = parse_users(MARIADB, rows)
    assert accounts == {ANN} and roles == {Account("r", "")} and grants == {Grant(ANN, None, None, "SELECT")}
    db_flags = ["Y" if name in ("SELECT", "GRANT OPTION") else "N" for _, name in MARIADB.db_columns()]
    assert parse_db(MARIADB, [("pd_ann", "%", "c\\_1", *db_flags)]) == {
        Grant(ANN, "c\\_1", None, "SELECT"),
        Grant(ANN, "c\\_1", None, "GRANT OPTION"),
    }
    assert parse_tables([("pd_bob", "%", "crm", "t", "Select,Grant,Delete versioning rows")]) == {
        Grant(BOB, "crm", "t", "SELECT"),
        Grant(BOB, "crm", "t", "GRANT OPTION"),
        Grant(BOB, "crm", "t", "DELETE HISTORY"),
    }
    assert parse_roles([("pd_ann", "%", "r", "")]) == {RoleGrant(ANN, "r", "")}
    inv = parse_inventory([("crm", None), ("crm", "t"), ("mysql", None), ("mysql", "user")])
    assert inv.databases == {"crm"} and inv.tables == {("crm", "t")}


def test_database_patterns_round_trip_and_wildcards_are_recognised() -> None:
    for name in ("plain", "with_underscore", "100%", "back\\slash"):
        assert exact_db_name(escape_db_pattern(name)) == name
    assert exact_db_name("c%") is None and exact_db_name("c_1") is None


def test_facts_survive_a_saved_plan_and_regions_cover_by_account_and_database() -> None:
    facts = (Grant(ANN, "crm", "t", "SELECT"), Grant(ANN, "c\\_1", None, "SELECT"), RoleGrant(BOB, "r", ""))
    for fact in facts:
        assert fact_from_json(fact.to_json()) == fact
    region = ServerRegion(frozenset({"pd_ann"}), frozenset({"c_1"}))
    assert region.covers(Grant(ANN, "c\\_1", None, "SELECT"))  # the exact pattern of c_1
    assert not region.covers(Grant(ANN, "c%", None, "SELECT"))  # a wildcard is not that database
    assert not region.covers(Grant(BOB, "c\\_1", None, "SELECT"))
    assert not region.covers(RoleGrant(ANN, "r", ""))  # a role concerns no database
    assert ServerRegion(None, None).covers(RoleGrant(ANN, "r", ""))


def test_two_users_mapping_to_one_account_get_nothing() -> None:
    from pushdown.model import changes as ch
    from pushdown.model.principals import Principal
    from pushdown.model.securables import ObjectRef
    from pushdown.model.state import Model
    from pushdown.reconcile.scope import Scope
    from pushdown_mysql.compile import AccountNaming, ServerObjects, compile_desired

    model = Model()
    for step in (
        lambda: ch.add_user(model, "ann@corp"),
        lambda: ch.add_user(model, "ann@partner"),
        lambda: ch.create_object(model, ObjectRef.of("catalog", "c"), properties={"backend": "m"}),
        lambda: ch.create_role(model, "r"),
        lambda: ch.grant_privileges(model, "r", ObjectRef.of("catalog", "c"), ["USE_CATALOG", "USE_SCHEMA"]),
        lambda: ch.grant_privileges(model, "r", ObjectRef.of("catalog", "c"), ["SELECT_TABLE"]),
        lambda: ch.grant_role(model, "r", Principal.user("ann@corp")),
    ):
        for e in step():
            model.apply(e)
    naming = AccountNaming(map_principal=lambda p: p.name.split("@")[0])
    inventory = ServerObjects(frozenset({"hr"}), frozenset({("hr", "pay")}))
    desired = compile_desired(
        model, "c", inventory, frozenset({ANN}), naming, Scope.everything().resolve(model)
    )
    assert desired.facts == frozenset()
    assert any("all map to account 'pd_ann'@'%'" in n for n in desired.notes)


def test_mysql8_reads_role_edges_and_the_role_settings() -> None:
    """MySQL 8: memberships in ``mysql.role_edges``; dynamic privileges in
    ``mysql.global_grants`` (global grants by their own name); ``mandatory_roles`` (every account holds
    them) and ``activate_all_roles_on_login`` read with the settings; a mandatory role is a
    finding with the statement that clears it."""
    reads = Dialect("mysql").queries()
    assert "mysql.role_edges" in reads and "mysql.roles_mapping" not in reads
    assert "mysql.global_grants" in reads and "mysql.global_priv" not in reads
    assert parse_dynamic([("pd_bob", "%", "set_user_id", "N")]) == {Grant(BOB, None, None, "SET_USER_ID")}
    assert "@@mandatory_roles, @@activate_all_roles_on_login" in reads["settings"][0]
    assert "mandatory_roles" not in MARIADB.queries()["settings"][0]
    assert parse_mandatory([(0, "`r_all`@`%`", 1)]) == "`r_all`@`%`" and parse_mandatory([(0,)]) == ""
    server = ServerRead(Dialect("mysql"), BOB, ServerObjects(frozenset(), frozenset()), frozenset(),
                        frozenset(), frozenset(), mandatory="`r_all`@`%`")  # fmt: skip
    (finding,) = mandatory_findings(server)
    assert finding.endswith("clear it by hand: SET PERSIST mandatory_roles = ''")
    assert list(mandatory_findings(replace(server, mandatory=""))) == []


def test_a_mapping_changed_for_a_user_outside_the_scope_is_caught_before_a_grant() -> None:
    """The hook now maps carol to ``bob`` (its answer changed; no plugin came or went, so
    the mapping version is the same). A sync scoped to bob must still see that carol
    shares bob's account: both are withheld and nothing is granted to ``pd_bob``."""
    from pushdown.model import changes as ch
    from pushdown.model.securables import ObjectRef
    from pushdown.reconcile.scope import Scope, scope_of
    from pushdown_mysql.compile import AccountNaming, ServerObjects, compile_desired
    from pushdown_mysql.identity import sharing
    from tests.costs import aliased_hooks, clash_model

    aliases, hooks = aliased_hooks()
    model = clash_model("m")
    naming = AccountNaming(
        map_principal=lambda p: hooks.map_principal("m", p),
        mapping_version=hooks.mapping_version,
        mapping_stable=hooks.mapping_stable,
    )
    inventory = ServerObjects(frozenset({"hr"}), frozenset({("hr", "pay")}))
    first = compile_desired(model, "c", inventory, frozenset(), naming, Scope.everything().resolve(model))
    assert not any("all map to account" in n for n in first.notes)  # a full sync: no clash yet

    aliases.alias["carol"] = "bob"  # the hook's answer for carol changed, the plugins did not
    events = ch.grant_privileges(model, "r", ObjectRef.parse("table c.hr.pay"), ["SELECT_TABLE"])
    for e in events:
        model.apply(e)
    scope = sharing(scope_of(events[0]).resolve(model), model, naming)  # bob's role: bob only
    desired = compile_desired(model, "c", inventory, frozenset({BOB}), naming, scope)
    assert any("users bob, carol all map to account 'pd_bob'@'%'" in n for n in desired.notes), desired.notes
    assert not any(getattr(f, "account", None) == BOB for f in desired.facts), desired.facts
