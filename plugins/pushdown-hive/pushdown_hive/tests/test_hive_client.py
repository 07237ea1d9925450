"""Each call of the Thrift client against the run's real metastore (Hive 2.3)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pushdown_hive.client import (
    GROUP,
    ROLE,
    USER,
    Grant,
    HiveAlreadyExists,
    HiveNotFound,
    HiveObject,
    HiveRefused,
    HiveUnavailable,
    MetastoreClient,
    ObjectType,
    parse_uri,
)

pytestmark = pytest.mark.hive


def test_inventory(hms: MetastoreClient, hive_db: Callable[[str], str]) -> None:
    db = hive_db("inv")
    hms.create_table(db, "orders", [("id", "int"), ("total", "double")])
    hms.create_table(db, "order_lines")
    assert db in hms.get_all_databases()
    assert sorted(hms.get_all_tables(db)) == ["order_lines", "orders"]
    assert hms.get_tables(db, "order_*") == ["order_lines"]
    assert hms.table_exists(db, "orders") and not hms.table_exists(db, "missing")
    with pytest.raises(HiveAlreadyExists, match="AlreadyExistsException"):
        hms.create_table(db, "orders")
    with pytest.raises(HiveNotFound, match="NoSuchObjectException"):
        hms.drop_table(db, "missing")
    missing = r"drop_database: (MetaException: .*NullPointerException|NoSuchObject)"
    with pytest.raises(HiveRefused, match=missing):
        hms.drop_database("no_such_db")  # Hive 2.3's words for a missing database (Hive 4: not found)
    assert hms.get_all_tables("no_such_db") == []  # no error for a missing database here
    hms.drop_table(db, "order_lines")
    assert hms.get_all_tables(db) == ["orders"]


def test_grants_many_per_call_and_all_principals_in_one_list(
    hms: MetastoreClient, hive_db: Callable[[str], str]
) -> None:
    db = hive_db("grants")
    hms.create_table(db, "t")
    table, database = HiveObject.of_table(db, "t"), HiveObject.database(db)
    grants = [
        Grant(table, "alice", USER, "SELECT"),
        Grant(table, "alice", USER, "INSERT"),
        Grant(table, "eng", GROUP, "SELECT"),
        Grant(database, "bob", USER, "CREATE"),
    ]
    before = hms.calls["grant_privileges"]
    assert hms.grant_privileges(grants) == 4
    assert hms.calls["grant_privileges"] == before + 1  # one call for all four

    # no principal: every principal's grants on the object, in one call
    assert sorted(hms.list_privileges(table)) == sorted(grants[:3])
    assert hms.list_privileges(database) == [grants[3]]
    assert all(g.grantor == "pushdown" and g.create_time > 0 for g in hms.list_privileges(table))
    # one principal's grants on the object
    assert sorted(hms.list_privileges(table, "alice", USER)) == sorted(grants[:2])
    # one principal's grants on every object
    assert sorted(hms.list_principal_privileges("alice", USER)) == sorted(grants[:2])

    # a duplicate grant fails with the server's words (opaque on Hive 2.3), and changes nothing
    with pytest.raises(HiveRefused, match=r"Internal error processing grant_privileges|is already granted"):
        hms.grant_privileges([grants[0], Grant(table, "carol", USER, "SELECT")])
    assert sorted(hms.list_privileges(table)) == sorted(grants[:3])

    assert hms.revoke_privileges(grants[:2]) == 2
    assert hms.list_privileges(table) == [grants[2]]
    with pytest.raises(HiveRefused, match=r"Internal error processing revoke_privileges|revoke_privileges: "):
        hms.revoke_privileges(grants[:1])  # not held any more
    assert hms.grant_privileges([]) == 0 and hms.revoke_privileges([]) == 0


def test_roles_and_privilege_set(hms: MetastoreClient, hive_db: Callable[[str], str]) -> None:
    db = hive_db("roles")
    hms.create_table(db, "t")
    table = HiveObject.of_table(db, "t")
    role, nested = "client_readers", "client_outer"
    hms.create_role(role)
    hms.create_role(nested)
    try:
        assert {"admin", "public", role}.issubset(hms.get_role_names())
        with pytest.raises(HiveRefused, match=r"Internal error processing create_role|already exists"):
            hms.create_role(role)
        hms.grant_role(role, "carol", USER)
        hms.grant_role(role, "analysts", GROUP)
        hms.grant_role(role, nested, ROLE)
        assert set(hms.list_roles("carol", USER)) == {role, "public"}
        holders = {(g.principal, g.principal_type) for g in hms.get_principals_in_role(role)}
        assert holders == {("carol", USER), ("analysts", GROUP), (nested, ROLE)}
        assert sorted(g.role for g in hms.get_role_grants_for_principal("carol", USER)) == sorted(
            [role, "public"]
        )

        hms.grant_privileges(
            [
                Grant(table, role, ROLE, "DELETE"),
                Grant(table, "carol", USER, "SELECT"),
                Grant(table, "analysts", GROUP, "UPDATE"),
            ]
        )
        ps = hms.get_privilege_set(table, "carol", ["analysts"])
        assert ps.users == {"carol": frozenset({"SELECT"})}
        assert ps.groups == {"analysts": frozenset({"UPDATE"})}
        assert ps.roles[role] == frozenset({"DELETE"})
        assert ps.all == {"SELECT", "UPDATE", "DELETE"}
        # a user outside the role and the group gets nothing
        assert hms.get_privilege_set(table, "mallory", []).all == frozenset()
        # table grants are not database grants
        assert hms.get_privilege_set(HiveObject.database(db), "carol", ["analysts"]).all == frozenset()

        hms.revoke_role(role, "carol", USER)
        assert hms.list_roles("carol", USER) == ["public"]
        assert "DELETE" not in hms.get_privilege_set(table, "carol", []).all
    finally:
        hms.drop_role(nested)
        hms.drop_role(role)
    assert role not in hms.get_role_names()
    hms.drop_role(role)  # Hive 2.3 drops a missing role without a word


def test_server_grants(hms: MetastoreClient) -> None:
    """The admin role's global grant is there from the start, spelled ``All``."""
    rows = hms.list_privileges(HiveObject.server())
    assert (
        Grant(
            HiveObject.server(), "admin", ROLE, "All", grantor="admin", grantor_type=ROLE, grant_option=True
        )
        in rows
    )
    assert all(g.obj.type is ObjectType.GLOBAL for g in rows)


def test_unreachable_is_temporary() -> None:
    client = MetastoreClient("127.0.0.1", 9, connect_timeout=2)  # the discard port: nothing listens
    with pytest.raises(HiveUnavailable, match=r"cannot connect to the metastore at thrift://127\.0\.0\.1:9"):
        client.get_all_databases()


def test_uri() -> None:
    assert parse_uri("thrift://127.0.0.1:9083") == ("127.0.0.1", 9083)
    for bad in ("http://h:1", "thrift://h", "h:9083"):
        with pytest.raises(ValueError, match="not a metastore URI"):
            parse_uri(bad)


def test_options_owners_and_partition_parameters_read_back(
    hms: MetastoreClient, hive_db: Callable[[str], str]
) -> None:
    """What the surface reads beyond privilege names: the grant option in
    ``get_privilege_set`` (own and through a role), the admin option of a membership, a
    database's owner and owner type, and a partitioned table's parameters."""
    db = hive_db("modifiers")
    hms.create_table(db, "t")
    table, role = HiveObject.of_table(db, "t"), "client_optioned"
    hms.create_role(role)
    try:
        hms.grant_privileges(
            [
                Grant(table, "dave", USER, "SELECT", grant_option=True),
                Grant(table, "dave", USER, "INSERT"),
                Grant(table, role, ROLE, "DELETE", grant_option=True),
            ]
        )
        hms.grant_role(role, "dave", USER, grant_option=True)
        ps = hms.get_privilege_set(table, "dave", [])
        assert ps.all == {"SELECT", "INSERT", "DELETE"} and ps.options == {"SELECT", "DELETE"}
        (held,) = [g for g in hms.get_role_grants_for_principal("dave", USER) if g.role == role]
        assert held.grant_option is True
        assert [g.grant_option for g in hms.get_principals_in_role(role)] == [True]
    finally:
        hms.drop_role(role)
    hms.set_database_owner(db, "etl_team", ROLE)
    row = hms.get_database(db)
    assert (row.ownerName, row.ownerType) == ("etl_team", int(ROLE))
    hms.create_table(
        db, "p", partitions=[("day", "string")], parameters={"PARTITION_LEVEL_PRIVILEGE": "TRUE"}
    )
    (p,) = hms.get_table_objects(db, ["p"])
    assert [k.name for k in p.partitionKeys] == ["day"] and p.parameters[
        "PARTITION_LEVEL_PRIVILEGE"
    ] == "TRUE"
    hms.set_table_owner(db, "p", "erin")
    assert hms.get_table_objects(db, ["p"])[0].owner == "erin"


def test_the_read_by_name_answers_what_the_table_list_answers(
    hms: MetastoreClient, hive_db: Callable[[str], str]
) -> None:
    """A scoped read asks its tables by name (``get_table_objects_by_name``) where a whole
    read lists the database: on the real metastore both answer the same tables. A name in
    capitals is the lower-case table (the metastore folds it: the read keeps only the
    scope's lower-case names, so ``T`` never reaches ``t``), a name the metastore lacks or
    has dropped answers nothing, and a database dropped meanwhile is left unread."""
    from pushdown_hive.calls import ThriftMetastore
    from pushdown_hive.readback import ServerScope, read_server

    db = hive_db("byname")
    for table in ("t", "u"):
        hms.create_table(db, table)
    ms = ThriftMetastore(hms)
    assert sorted(i.table for i in ms.table_infos(db, ["T", "ghost", "t"])) == ["t"]
    hms.drop_table(db, "u")
    whole = read_server(ms, ServerScope({db: None}))
    some = read_server(ms, ServerScope({db: frozenset({"t", "u", "ghost"})}))
    assert whole.tables == some.tables == {(db, "t")}
    assert [i.table for i in some.infos[db]] == ["t"]
    assert read_server(ms, ServerScope({db: frozenset({"T"})})).tables == frozenset()
    gone = f"{db}_gone"  # listed by the database list, dropped before its tables are read

    class Stale(ThriftMetastore):
        def databases(self) -> list[str]:
            return [*super().databases(), gone]

    read = read_server(Stale(hms), ServerScope({gone: frozenset({"t"}), db: frozenset({"t"})}))
    assert read.tables == {(db, "t")} and not read.infos.get(gone)
