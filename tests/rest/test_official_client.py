"""The official Python client (apache-gravitino 1.3.1) against ``pushdown serve``: every
access-control call it has, with the answers read back through the client and checked
against the model the store holds (the evaluator's view), and its errors decoded into the
client's own exception types."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gravitino import Catalog
from gravitino.api.authorization.owner import Owner
from gravitino.api.authorization.privileges import (
    ManageGrants,
    ModifyTable,
    SelectTable,
    UseCatalog,
    UseSchema,
)
from gravitino.api.authorization.securable_objects import SecurableObjects
from gravitino.api.metadata_object import MetadataObject
from gravitino.api.metadata_objects import MetadataObjects
from gravitino.exceptions import base as gx

from pushdown.decide.evaluator import Evaluator
from pushdown.journal.store import Store
from pushdown.model.state import Model

from .conftest import admin_client, client, init_store, serving


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A server whose metalake ``test`` was created by the service admin ``admin`` (its owner),
    with a catalog ``cat`` and a schema ``cat.db`` registered by the client."""
    tmp = tmp_path_factory.mktemp("client")
    config = tmp / "pushdown.toml"
    config.write_text('store = "pd.db"\n[access]\nservice_admins = ["admin"]\n')
    init_store(config)
    with serving(config, tmp / "serve.log") as server:
        uri = server.ready()
        admin_client(uri, "admin").create_metalake("test", "for the client", {"k": "v"})
        c = client(uri, "admin")
        cat = c.create_catalog("cat", Catalog.Type.RELATIONAL, "hive", "a catalog", {"team": "none"})
        cat.as_schemas().create_schema("db", "a schema", {})
        yield uri, tmp / "pd.db"


def model(store_path: Path) -> Model:
    store = Store(store_path)
    try:
        return store.load()
    finally:
        store.close()


def test_users_add_list_get_remove_with_a_slash_in_the_name(site: tuple[str, Path]) -> None:
    uri, db = site
    c = client(uri, "admin")
    user = c.add_user("team/ann")  # %2F in the path segment, routed on the raw path
    assert user.name() == "team/ann"
    assert user.audit_info().creator() == "admin"
    assert user.audit_info().create_time().endswith("Z")
    assert "team/ann" in model(db).users
    assert c.get_user("team/ann").name() == "team/ann"
    assert "team/ann" in c.list_user_names()
    details = {u.name(): u for u in c.list_users()}
    assert details["team/ann"].roles() == []
    with pytest.raises(gx.UserAlreadyExistsException):
        c.add_user("team/ann")
    with pytest.raises(gx.NoSuchUserException):
        c.get_user("nobody")
    assert c.remove_user("team/ann") is True
    assert c.remove_user("team/ann") is False
    assert "team/ann" not in model(db).users


def test_groups_add_list_get_remove(site: tuple[str, Path]) -> None:
    uri, db = site
    c = client(uri, "admin")
    assert c.add_group("analysts").name() == "analysts"
    assert "analysts" in c.list_group_names()
    assert [g.name() for g in c.list_groups() if g.name() == "analysts"] == ["analysts"]
    assert c.get_group("analysts").roles() == []
    with pytest.raises(gx.GroupAlreadyExistsException):
        c.add_group("analysts")
    with pytest.raises(gx.NoSuchGroupException):
        c.get_group("nobody")
    assert c.remove_group("analysts") is True
    assert "analysts" not in model(db).groups


def test_roles_with_securable_objects_round_trip(site: tuple[str, Path]) -> None:
    uri, db = site
    c = client(uri, "admin")
    objects = [
        SecurableObjects.of_catalog("cat", [UseCatalog.allow()]),
        SecurableObjects.of_schema(
            SecurableObjects.of_catalog("cat", []), "db", [UseSchema.allow(), ModifyTable.deny()]
        ),
    ]
    role = c.create_role("readers", {}, objects)
    got = {
        (o.full_name(), o.type()): {(p.name().name, p.condition().name) for p in o.privileges()}
        for o in c.get_role("readers").securable_objects()
    }
    assert got == {
        ("cat", MetadataObject.Type.CATALOG): {("USE_CATALOG", "ALLOW")},
        ("cat.db", MetadataObject.Type.SCHEMA): {("USE_SCHEMA", "ALLOW"), ("MODIFY_TABLE", "DENY")},
    }
    assert role.audit_info().creator() == "admin"
    assert "readers" in c.list_role_names()
    m = model(db)
    assert {str(g) for g in m.roles["readers"]} == {
        "ALLOW USE_CATALOG on catalog cat",
        "ALLOW USE_SCHEMA on schema cat.db",
        "DENY MODIFY_TABLE on schema cat.db",
    }
    with pytest.raises(gx.RoleAlreadyExistsException):
        c.create_role("readers", {}, [])
    with pytest.raises(gx.NoSuchRoleException):
        c.get_role("nobody")
    assert c.delete_role("readers") is True
    assert c.delete_role("readers") is False
    assert "readers" not in model(db).roles


def test_a_role_naming_an_unregistered_object_writes_nothing(site: tuple[str, Path]) -> None:
    """Nobody owns an object that does not exist: only a holder of MANAGE_GRANTS learns that
    it does not exist (404); anyone else is refused (403), and neither writes anything."""
    uri, db = site
    c = client(uri, "admin")
    with pytest.raises(gx.ForbiddenException):
        c.create_role("ghosts", {}, [SecurableObjects.of_catalog("nowhere", [UseCatalog.allow()])])
    c.create_role("granters", {}, [SecurableObjects.of_metalake("test", [ManageGrants.allow()])])
    c.grant_roles_to_user(["granters"], "admin")
    with pytest.raises(gx.NoSuchMetadataObjectException):
        c.create_role("ghosts", {}, [SecurableObjects.of_catalog("nowhere", [UseCatalog.allow()])])
    assert "ghosts" not in model(db).roles


def test_grant_and_revoke_roles_and_privileges(site: tuple[str, Path]) -> None:
    uri, db = site
    c = client(uri, "admin")
    c.add_user("bea")
    c.add_group("ops")
    c.create_role("writers", {}, [])
    assert c.grant_roles_to_user(["writers"], "bea").roles() == ["writers"]
    assert c.grant_roles_to_group(["writers"], "ops").roles() == ["writers"]
    schema = MetadataObjects.of(["cat", "db"], MetadataObject.Type.SCHEMA)
    role = c.grant_privileges_to_role("writers", schema, [ModifyTable.allow(), SelectTable.allow()])
    (obj,) = role.securable_objects()
    assert obj.full_name() == "cat.db"
    assert {p.name().name for p in obj.privileges()} == {"MODIFY_TABLE", "SELECT_TABLE"}
    ev = Evaluator(model(db))
    assert ev.authorize("bea", "load_schema", "cat.db").allowed is False  # no USE_CATALOG yet
    c.grant_privileges_to_role(
        "writers",
        MetadataObjects.of(["cat"], MetadataObject.Type.CATALOG),
        [UseCatalog.allow(), UseSchema.allow()],
    )
    ev = Evaluator(model(db))
    assert ev.authorize("bea", "load_schema", "cat.db").allowed
    role = c.revoke_privileges_from_role("writers", schema, [ModifyTable.allow()])
    assert {
        p.name().name for o in role.securable_objects() if o.full_name() == "cat.db" for p in o.privileges()
    } == {"SELECT_TABLE"}
    assert c.revoke_roles_from_user(["writers"], "bea").roles() == []
    assert c.revoke_roles_from_group(["writers"], "ops").roles() == []
    m = model(db)
    assert "writers" not in m.user_roles.get("bea", set())
    assert "writers" not in m.group_roles.get("ops", set())
    with pytest.raises(gx.NoSuchRoleException):
        c.grant_roles_to_user(["nobody"], "bea")
    with pytest.raises(gx.NoSuchUserException):
        c.grant_roles_to_user(["writers"], "nobody")


def test_owners_get_and_set(site: tuple[str, Path]) -> None:
    uri, db = site
    c = client(uri, "admin")
    c.add_user("carl")
    catalog = MetadataObjects.of(["cat"], MetadataObject.Type.CATALOG)
    owner = c.get_owner(catalog)
    assert owner is not None and owner.name() == "admin" and owner.type() == Owner.Type.USER
    c.set_owner(catalog, "carl", Owner.Type.USER)
    assert c.get_owner(catalog).name() == "carl"
    assert model(db).owners[next(o for o in model(db).owners if str(o) == "catalog cat")] == "carl"
    with pytest.raises(gx.ForbiddenException):  # admin no longer owns the catalog, nor the...
        client(uri, "carl").set_owner(
            MetadataObjects.of(["test"], MetadataObject.Type.METALAKE), "carl", Owner.Type.USER
        )
    client(uri, "carl").set_owner(catalog, "admin", Owner.Type.USER)  # ...but carl owns the catalog
    assert c.get_owner(catalog).name() == "admin"


def test_a_user_who_may_not_is_refused_with_forbidden_and_nothing_is_written(site: tuple[str, Path]) -> None:
    uri, db = site
    c = client(uri, "admin")
    c.add_user("dan")
    before = Store(db)
    seq = before.last_seq()
    before.close()
    dan = client(uri, "dan")
    with pytest.raises(gx.ForbiddenException, match="dan may not"):
        dan.add_user("eve")
    with pytest.raises(gx.ForbiddenException):
        dan.create_role("mine", {}, [])
    with pytest.raises(gx.ForbiddenException):
        dan.get_user("admin")
    assert dan.list_user_names() == ["dan"]  # the others are not his to see
    assert dan.get_user("dan").name() == "dan"
    after = Store(db)
    assert after.last_seq() == seq
    after.close()


def test_unknown_privilege_is_refused_by_the_server(site: tuple[str, Path]) -> None:
    from gravitino.api.authorization.privileges import CreateView

    uri, _ = site
    c = client(uri, "admin")
    c.create_role("viewers", {}, [])
    with pytest.raises(gx.IllegalPrivilegeException, match="unknown privilege"):
        c.grant_privileges_to_role(
            "viewers", MetadataObjects.of(["cat", "db"], MetadataObject.Type.SCHEMA), [CreateView.allow()]
        )


def test_close_is_answered(site: tuple[str, Path]) -> None:
    uri, _ = site
    client(uri, "admin").close()  # sends CLOSE /
    admin_client(uri, "admin").close()
