"""The reference's "Example" workflow, end to end through the official client against
``pushdown serve``, each step as the user the reference names, and each step the
requirement table forbids to the wrong user refused (ForbiddenException, nothing written).

1-3. The service admin creates the metalake, adds Manager and makes Manager its owner;
4-6. Manager adds Staff, creates role catalog_manager with CREATE_CATALOG and grants it
to Staff; 7-12. Staff creates a Hive catalog, a schema and a table, then a MySQL catalog,
schema and table, and owns them; 13. Staff may load (query) both tables."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gravitino import Catalog, NameIdentifier
from gravitino.api.authorization.owner import Owner
from gravitino.api.authorization.privileges import CreateCatalog
from gravitino.api.authorization.securable_objects import SecurableObjects
from gravitino.api.metadata_object import MetadataObject
from gravitino.api.metadata_objects import MetadataObjects
from gravitino.api.rel.column import Column
from gravitino.api.rel.types.types import Types
from gravitino.exceptions import base as gx

from pushdown.decide.evaluator import Evaluator
from pushdown.journal.store import Store

from .conftest import admin_client, client, init_store, serving


def refused(db: Path, call: Callable[[], Any]) -> None:
    """``call`` is refused with ForbiddenException and writes nothing."""
    store = Store(db)
    before = store.last_seq()
    with pytest.raises(gx.ForbiddenException):
        call()
    assert store.last_seq() == before
    store.close()


def create_all(c: Any, catalog: str, provider: str, schema: str, table: str) -> None:
    made = c.create_catalog(catalog, Catalog.Type.RELATIONAL, provider, f"a {provider} catalog", {})
    made.as_schemas().create_schema(schema, "", {})
    columns = [Column.of("id", Types.IntegerType.get())]
    made.as_table_catalog().create_table(NameIdentifier.of(schema, table), columns, "", {})


def test_the_reference_example_workflow_as_its_users(tmp_path: Path) -> None:
    config = tmp_path / "pushdown.toml"
    config.write_text('store = "pd.db"\n[access]\nservice_admins = ["admin"]\n')
    init_store(config)
    db = tmp_path / "pd.db"
    with serving(config, tmp_path / "serve.log") as server:
        uri = server.ready()
        # 1. the service admin creates the metalake; nobody else may
        refused(db, lambda: admin_client(uri, "Manager").create_metalake("test", "", {}))
        admin_client(uri, "admin").create_metalake("test", "the example", {})
        admin = client(uri, "admin")
        # 2-3. the service admin adds Manager and makes Manager the metalake's owner
        admin.add_user("Manager")
        metalake = MetadataObjects.of(["test"], MetadataObject.Type.METALAKE)
        refused(db, lambda: client(uri, "Manager").set_owner(metalake, "Manager", Owner.Type.USER))
        admin.set_owner(metalake, "Manager", Owner.Type.USER)
        assert admin.get_owner(metalake).name() == "Manager"
        manager = client(uri, "Manager")
        # 4. Manager adds Staff (and Other, who is given nothing); the admin no longer may
        refused(db, lambda: admin.add_user("Staff"))
        manager.add_user("Staff")
        manager.add_user("Other")
        staff = client(uri, "Staff")
        refused(db, lambda: staff.add_user("Intruder"))
        # 5. Manager creates role catalog_manager with CREATE_CATALOG on the metalake
        grants = [SecurableObjects.of_metalake("test", [CreateCatalog.allow()])]
        refused(db, lambda: staff.create_role("catalog_manager", {}, grants))
        manager.create_role("catalog_manager", {}, grants)
        # 6. Manager grants it to Staff; Staff may not grant it to himself
        refused(db, lambda: staff.create_catalog("catalog_hive", Catalog.Type.RELATIONAL, "hive", "", {}))
        refused(db, lambda: staff.grant_roles_to_user(["catalog_manager"], "Staff"))
        manager.grant_roles_to_user(["catalog_manager"], "Staff")
        # 7-9. Staff creates a Hive catalog, schema hive_db and table hive_table
        create_all(staff, "catalog_hive", "hive", "hive_db", "hive_table")
        # 10-12. then a MySQL catalog, schema mysql_db and table mysql_table
        create_all(staff, "catalog_mysql", "jdbc-mysql", "mysql_db", "mysql_table")
        other = client(uri, "Other")
        refused(db, lambda: other.create_catalog("catalog_x", Catalog.Type.RELATIONAL, "hive", "", {}))
        refused(db, lambda: other.load_catalog("catalog_hive").as_schemas().create_schema("x", "", {}))
        for catalog in ("catalog_hive", "catalog_mysql"):
            ref = MetadataObjects.of([catalog], MetadataObject.Type.CATALOG)
            assert staff.get_owner(ref).name() == "Staff"
        table = MetadataObjects.of(["catalog_mysql", "mysql_db", "mysql_table"], MetadataObject.Type.TABLE)
        assert staff.get_owner(table).name() == "Staff"
        refused(db, lambda: other.get_owner(table))
        # 13. Staff may query both tables (load_table), Other neither
        store = Store(db)
        ev = Evaluator(store.load())
        store.close()
        for t in ("catalog_hive.hive_db.hive_table", "catalog_mysql.mysql_db.mysql_table"):
            assert ev.authorize("Staff", "load_table", t).allowed
            assert not ev.authorize("Other", "load_table", t).allowed
        assert sorted(staff.list_catalogs()) == ["catalog_hive", "catalog_mysql"]
        assert other.list_catalogs() == []
