"""Every change has an author and is checked before anything is written; the journal says
who did what; creating makes the creator the owner; the metalake's own calls."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from pushdown.app.cli import main
from pushdown.app.service import AccessControl
from pushdown.app.settings import AccessSettings, ConfigError, from_mapping
from pushdown.errors import AlreadyExists, Forbidden, ModelError, NotEmpty, UnknownObject
from pushdown.journal.store import Store
from pushdown.model.securables import METALAKE, ObjectRef


def control(path: str = ":memory:", admins: tuple[str, ...] = ("root",)) -> AccessControl:
    return AccessControl(Store(path), push=False, access=AccessSettings(service_admins=admins))


@pytest.fixture
def ac() -> AccessControl:
    """A metalake owned by ``meg``, created by service admin ``root``; users ann, bob."""
    ac = control()
    ac.acting("root").create_metalake("test", comment="c", properties={"k": "v"})
    assert ac.model.owners[METALAKE] == "root"  # the creator owns it; now hand it to meg
    ac.acting("root").add_user("meg")
    ac.acting("root").set_owner(METALAKE, "meg")
    for u in ("ann", "bob"):
        ac.acting("meg").add_user(u)
    return ac


def test_a_refused_change_names_who_what_and_why_and_writes_nothing(ac: AccessControl) -> None:
    before = ac.store.last_seq()
    with pytest.raises(Forbidden) as err:
        ac.acting("ann").add_user("eve")
    assert err.value.user == "ann" and err.value.operation == "add_user"
    assert str(err.value).startswith("ann may not add user (on user eve): "), str(err.value)
    assert "MANAGE_USERS" in str(err.value) or "owner" in str(err.value)
    assert err.value.decision is not None and not err.value.decision.allowed
    assert ac.store.last_seq() == before and "eve" not in ac.model.users


def test_a_privilege_allows_and_a_deny_wins(ac: AccessControl) -> None:
    meg = ac.acting("meg")
    meg.create_role("admins")
    meg.grant_privileges("admins", "metalake", ["MANAGE_USERS"])
    meg.grant_role("admins", "user ann")
    ac.acting("ann").add_user("eve")
    assert "eve" in ac.model.users
    meg.create_role("no_users")
    meg.grant_privileges("no_users", "metalake", ["MANAGE_USERS"], "DENY")
    meg.grant_role("no_users", "user ann")
    with pytest.raises(Forbidden):
        ac.acting("ann").remove_user("eve")
    assert "eve" in ac.model.users


def test_the_creator_owns_what_it_creates_and_only_an_owner_sets_owners(ac: AccessControl) -> None:
    meg = ac.acting("meg")
    meg.create_role("builders")
    meg.grant_privileges(
        "builders", "metalake", ["CREATE_CATALOG", "USE_CATALOG", "CREATE_SCHEMA", "CREATE_ROLE"]
    )
    meg.grant_role("builders", "user ann")
    ann = ac.acting("ann")
    ann.create_object("catalog hive1")
    ann.create_object("schema hive1.sales")
    ann.create_role("sales_reader")
    model = ac.model
    assert model.owners[ObjectRef.parse("catalog hive1")] == "ann"
    assert model.owners[ObjectRef.parse("schema hive1.sales")] == "ann"
    assert model.owners[ObjectRef.parse("role sales_reader")] == "ann"
    with pytest.raises(Forbidden):  # bob holds nothing
        ac.acting("bob").create_object("catalog other")
    with pytest.raises(Forbidden):  # not bob's to give away
        ac.acting("bob").set_owner("schema hive1.sales", "bob")
    ann.set_owner("schema hive1.sales", "bob")
    assert ac.model.owners[ObjectRef.parse("schema hive1.sales")] == "bob"
    # the owner of an object grants on it; a stranger may not
    ann.grant_privileges("sales_reader", "catalog hive1", ["USE_CATALOG"])
    with pytest.raises(Forbidden):
        ac.acting("bob").grant_privileges("sales_reader", "catalog hive1", ["SELECT_TABLE"])
    # the plain library and the administrator stay unchecked
    ac.create_object("catalog plain")
    ac.as_admin().create_object("catalog admin_made")
    assert ObjectRef.parse("catalog plain") not in ac.model.owners


def test_the_check_is_made_again_when_another_writer_committed_in_between(ac: AccessControl) -> None:
    meg = ac.acting("meg")
    meg.create_role("admins")
    meg.grant_privileges("admins", "metalake", ["MANAGE_USERS"])
    meg.grant_role("admins", "user ann")
    other = AccessControl(ac.store, push=False)  # another writer on the same store
    calls = []

    def build(model):
        from pushdown.model import changes

        calls.append(1)
        if len(calls) == 1:  # between ann's check and her commit, meg takes the role away
            other.revoke_role("admins", "user ann")
        return changes.add_user(model, "eve")

    with pytest.raises(Forbidden):
        ac.acting("ann").change(build, operation="add_user", target="eve")
    assert len(calls) == 1 and "eve" not in ac.model.users  # refused by the second check


def test_only_the_administrator_loads_a_whole_model(ac: AccessControl) -> None:
    with pytest.raises(Forbidden, match="only the administrator"):
        ac.acting("meg").load_model(ac.model)
    with pytest.raises(Forbidden):
        ac.acting("meg").set_service_admins(["meg"])


def test_the_journal_records_the_author_and_the_way_in(ac: AccessControl) -> None:
    ac.acting("meg", via="rest", request="r-42").create_role("r1")
    ac.as_admin("spec").add_user("zed")
    entries = ac.store.history(limit=3)
    assert [(e.actor, e.via, e.request) for e in entries[:2]] == [
        ("pushdown", "spec", None),
        ("meg", "rest", "r-42"),
    ]
    assert entries[0].seq > entries[1].seq  # newest first
    mine = ac.store.history(mentions=["role r1"])
    assert [e.event.name for e in mine] == ["owner_set", "role_created"]
    assert ac.store.history(mentions=["user zed"])[0].actor == "pushdown"
    assert ac.store.history(mentions=["user nobody"]) == []


def test_audit_objects_follow_the_journal(ac: AccessControl) -> None:
    meg = ac.acting("meg")
    meg.create_role("r1")
    made = ac.audit("role", "r1")
    assert made is not None and made.creator == "meg" and made.last_modifier == "meg"
    assert made.create_time.endswith("Z") and datetime.fromisoformat(made.create_time).tzinfo is not None
    ac.as_admin().grant_privileges("r1", "metalake", ["CREATE_CATALOG"])
    changed = ac.audit("role", "r1")
    assert changed is not None and changed.creator == "meg" and changed.last_modifier == "pushdown"
    assert changed.last_modified_time >= made.create_time
    assert set(ac.audits("user")) == {"root", "meg", "ann", "bob"}
    meg.create_object("catalog c")
    meg.create_object("schema c.s")
    meg.rename_object("catalog c", "d")
    assert ac.audit("object", "schema d.s") is not None and ac.audit("object", "schema c.s") is None
    meg.remove_user("bob")
    assert ac.audit("user", "bob") is None
    metalake = ac.audit("metalake", "test")
    assert metalake is not None and metalake.creator == "root"


def test_a_metalake_is_created_by_a_service_admin_and_dropped_by_its_owner() -> None:
    ac = control()
    with pytest.raises(Forbidden, match="service admin"):
        ac.acting("eve").create_metalake("test")
    assert not ac.metalake().exists
    ac.acting("root").create_metalake("test", comment="hello", properties={"a": "b"})
    info = ac.metalake()
    assert (info.name, info.comment, info.properties, info.exists) == ("test", "hello", {"a": "b"}, True)
    assert ac.model.owners[METALAKE] == "root" and "root" in ac.model.users
    with pytest.raises(AlreadyExists):
        ac.acting("root").create_metalake("test")
    with pytest.raises(ModelError, match="one metalake"):
        ac.acting("root").create_metalake("other")
    ac.acting("root").add_user("ann")
    with pytest.raises(NotEmpty):
        ac.acting("root").drop_metalake("test")
    with pytest.raises(Forbidden):
        ac.acting("ann").drop_metalake("test", force=True)
    with pytest.raises(UnknownObject):
        ac.acting("root").drop_metalake("nope", force=True)
    ac.acting("root").drop_metalake("test", force=True)
    assert not ac.metalake().exists and not ac.model.users
    ac.acting("root").create_metalake("again")  # an empty store takes a new one
    assert ac.metalake().name == "again"


def test_an_older_store_gets_the_author_columns(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE journal(seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, "
        "name TEXT NOT NULL, payload TEXT NOT NULL)"
    )
    db.execute(
        "INSERT INTO journal(at, name, payload) VALUES ('2026-01-01T00:00:00+00:00', 'user_added', ?)",
        (json.dumps({"name": "user_added", "user": "old"}),),
    )
    db.commit()
    db.close()
    ac = control(str(path))
    ac.acting("root").create_metalake("m")
    rows = ac.store.history()
    assert rows[-1].actor is None and rows[-1].via is None and rows[0].actor == "root"
    ac.store.close()


def test_the_access_table_is_checked() -> None:
    cfg = from_mapping({"access": {"service_admins": ["a", "b"], "admin": "ops"}}, Path("."), "f.toml")
    assert cfg.access == AccessSettings(("a", "b"), "ops")
    for raw, words in [
        ({"access": {"service_admins": "a"}}, "service_admins must be a list"),
        ({"access": {"admin": ""}}, "access.admin"),
        ({"access": {"nope": 1}}, "unknown setting"),
        ({"access": 3}, "[access] must be a table"),
    ]:
        with pytest.raises(ConfigError, match=None) as err:
            from_mapping(raw, Path("."), "f.toml")
        assert words in str(err.value)


def test_pushdown_log_answers_who_granted_this_and_when(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ac = control(str(tmp_path / "pushdown.db"))
    ac.acting("root").create_metalake("test")
    root = ac.acting("root", via="rest", request="req-7")
    root.add_user("ann")
    root.create_object("catalog c")
    root.create_role("reader")
    root.grant_privileges("reader", "catalog c", ["USE_CATALOG"])
    root.grant_role("reader", "user ann")
    ac.store.close()
    out = CliRunner().invoke(main, ["log", "--user", "ann"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert "root via rest req-7: granted role reader to user ann" in lines[0]
    assert "added user ann" in lines[-1] and len(lines) == 2
    out = CliRunner().invoke(main, ["log", "--object", "catalog c", "--json", "-n", "1"])
    row = json.loads(out.stdout)
    assert row["actor"] == "root" and row["event"] == "privileges_granted" and row["request"] == "req-7"
    assert "USE_CATALOG" in row["change"] and row["at"].endswith("Z")
    out = CliRunner().invoke(main, ["log", "--role", "nobody"])
    assert out.exit_code == 0 and "no changes recorded that name role nobody" in out.stdout


def test_an_acting_change_is_pushed_and_what_the_directory_says_is_recorded_by_pushdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ac = AccessControl.open()  # the embedded defaults: the recording backend, push on
    ac.add_user("meg")
    ac.set_owner("metalake", "meg")
    ac.add_group("staff", ["meg"])
    result = ac.acting("meg", via="rest", request="q1").add_user("ann")
    assert [r.ok for r in result.synced] == [True] and result.lagging == {}
    assert ac.store.history(limit=1)[0].actor == "meg"
    ac.close()


def test_a_service_admin_is_removed_only_by_a_service_admin(ac: AccessControl) -> None:
    """Being a service admin is server administration (Gravitino keeps it in the server's
    configuration): a MANAGE_USERS holder, or the metalake's owner, who removes a service
    admin from the metalake would strip him of it; refused, and nothing written. Any other
    user he removes as before; a service admin who may manage users removes one. The
    metalake's owner is removed by a service admin only, too: she would lose the metalake."""
    ac.set_service_admins(["root", "ann"])
    ac.create_role("people")
    ac.grant_privileges("people", METALAKE, ["MANAGE_USERS"])
    ac.grant_role("people", "user bob")
    seq = ac.store.last_seq()
    for caller in ("bob", "meg"):
        with pytest.raises(Forbidden, match="may not remove user"):
            ac.acting(caller).remove_user("ann")
    assert ac.store.last_seq() == seq and ac.model.service_admins == {"root", "ann"}
    ac.acting("meg").add_user("carl")
    ac.acting("bob").remove_user("carl")
    with pytest.raises(Forbidden, match="may not remove user"):  # the metalake's owner alike
        ac.acting("bob").remove_user("meg")
    assert ac.model.owners[METALAKE] == "meg" and "meg" in ac.model.users
    ac.grant_role("people", "user root")  # a service admin who may manage users
    ac.acting("root").remove_user("ann")
    assert "ann" not in ac.model.users and ac.model.service_admins == {"root"}
