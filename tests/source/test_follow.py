"""Following a Gravitino metalake (pushdown serve plays it, driven by the official client):
the store's model becomes the source's, as one change by the source; a poll that finds
nothing changed reads once and changes nothing; every fault (an error answer, a refusal,
a server gone mid-read, a source changing during the read) changes nothing, widens
nothing, and the status says what happened; a read that would remove most of the model
is held back; every other writer is refused while a source is configured."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from gravitino.api.authorization.privileges import SelectTable, UseCatalog, UseSchema
from gravitino.api.authorization.securable_objects import SecurableObjects
from gravitino.api.metadata_object import MetadataObject
from gravitino.api.metadata_objects import MetadataObjects

from pushdown.app.cli import main
from pushdown.app.service import AccessControl
from pushdown.app.service.sourcestatus import load_status
from pushdown.app.source.follow import Follower
from pushdown.decide.evaluator import Evaluator
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import ConfigError, Followed
from pushdown.model.state import Model

from .conftest import Rig, error_body

#: operations decided per (user, object): enough to see any widening or narrowing
OPS = ("load_table", "alter_table", "create_table", "load_schema", "load_catalog")


def decisions(model: Model) -> set[tuple[str, str, str]]:
    """Every (user, operation, object) the evaluator allows, over every registered object."""
    ev = Evaluator(model)
    out = set()
    for obj in model.objects:
        for op in OPS:
            if OPERATIONS[op].target != obj.type:
                continue
            for user in model.users:
                if ev.authorize(user, op, obj, explain=False).allowed:
                    out.add((user, op, str(obj)))
    return out


def source_model(rig: Rig) -> Model:
    return rig.gravitino.ac.model


def test_the_model_becomes_the_sources_and_a_second_poll_reads_once_and_changes_nothing(rig: Rig) -> None:
    f = Follower(rig.config)
    first = f.poll(rig.ac)
    assert first.ok and first.changes > 0 and first.reads == 2
    model = rig.ac.model
    assert decisions(model) == decisions(source_model(rig))
    assert ("ann", "load_table", "table c.db.t0") in decisions(model)
    assert ("ann", "load_table", "table c.db.t3") not in decisions(model)  # the DENY came along
    assert model.catalog_backend("c") == "demo" and model.catalog_backend("other") is None
    # one change, written by the source
    history = rig.ac.store.history(limit=1000)
    assert history and {e.via for e in history} == {"source"}
    assert len({e.seq for e in history}) == first.changes

    seq = rig.ac.store.last_seq()
    again = f.poll(rig.ac)
    assert again.ok and again.unchanged and again.changes == 0 and again.reads == 1
    assert rig.ac.store.last_seq() == seq
    status = load_status(rig.ac.store, "")
    assert status.last_good is not None and not status.failing
    assert any("catalog other" in n and "no configured backend" in n for n in status.notes)


def test_a_change_made_through_the_client_arrives_at_the_next_poll(rig: Rig) -> None:
    f = Follower(rig.config)
    assert f.poll(rig.ac).ok
    rig.client.grant_roles_to_user(["reader"], "bob")
    rig.client.revoke_privileges_from_role(
        "reader", MetadataObjects.of(["c", "db"], MetadataObject.Type.SCHEMA), [SelectTable.allow()]
    )
    result = f.poll(rig.ac)
    assert result.ok and result.summary == {"role granted": 1, "privileges revoked": 1}
    assert decisions(rig.ac.model) == decisions(source_model(rig))
    # a second follower (another process: the CLI) sees the same read as unchanged
    other = Follower(rig.config)
    assert other.poll(rig.ac).unchanged


def _unchanged_after(rig: Rig, fault: Any) -> Any:
    """Converge once, then change the source and poll under ``fault``: return the result,
    after checking that the store did not move and decides exactly what it did."""
    f = Follower(rig.config)
    assert f.poll(rig.ac).ok
    before, seq = decisions(rig.ac.model), rig.ac.store.last_seq()
    rig.client.grant_roles_to_user(["writer"], "bob")  # the change the faulty read would carry
    rig.client.revoke_roles_from_user(["reader"], "ann")
    rig.proxy.reset()
    fault(rig)
    result = f.poll(rig.ac)
    assert not result.ok
    assert rig.ac.store.last_seq() == seq and decisions(rig.ac.model) == before  # nothing lost or widened
    status = load_status(rig.ac.store, "")
    assert status.failing and status.error_kind == result.kind and status.last_error == result.error
    rig.proxy.reset()
    healed = f.poll(rig.ac)  # the next interval: the source answers again
    assert healed.ok and decisions(rig.ac.model) == decisions(source_model(rig))
    assert not load_status(rig.ac.store, "").failing
    return result


def test_a_source_answering_500_changes_nothing(rig: Rig) -> None:
    def fault(r: Rig) -> None:
        boom = (500, error_body(1002, "RuntimeException", "the backing store is down"))
        r.proxy.rule = lambda n, m, p: boom if "/roles/" in p else None

    result = _unchanged_after(rig, fault)
    assert result.kind == "server error" and "the backing store is down" in result.error


def test_a_source_answering_403_changes_nothing(rig: Rig) -> None:
    def fault(r: Rig) -> None:
        no = (403, error_body(1008, "ForbiddenException", "admin may not list users"))
        r.proxy.rule = lambda n, m, p: no if p.endswith("/users?details=true") else None

    result = _unchanged_after(rig, fault)
    assert result.kind == "forbidden" and "403" in result.error


def test_a_source_gone_mid_read_changes_nothing(rig: Rig) -> None:
    def fault(r: Rig) -> None:  # from the fourth request on the connection is cut
        r.proxy.rule = lambda n, m, p: "drop" if n >= 4 else None

    result = _unchanged_after(rig, fault)
    assert result.kind == "unreachable"


def test_a_role_deleted_between_two_calls_of_a_read_changes_nothing(rig: Rig) -> None:
    def fault(r: Rig) -> None:
        def before(n: int, path: str) -> None:  # listed, then gone before it is read
            if path.endswith("/roles/writer"):
                r.client.revoke_roles_from_group(["writer"], "eng")
                r.client.revoke_roles_from_user(["writer"], "bob")
                r.client.delete_role("writer")

        r.proxy.before = before

    result = _unchanged_after(rig, fault)
    assert result.kind == "changed during the read"


def test_a_source_that_changes_between_two_reads_is_read_again_and_nothing_is_lost(rig: Rig) -> None:
    f = Follower(rig.config)
    assert f.poll(rig.ac).ok
    rig.client.grant_roles_to_user(["writer"], "bob")
    done = []

    def before(n: int, path: str) -> None:  # during the first read, after its users were read
        if path.endswith("/roles") and not done:
            done.append(n)
            rig.client.revoke_roles_from_user(["reader"], "ann")

    rig.proxy.reset()
    rig.proxy.before = before
    result = f.poll(rig.ac)
    assert result.ok and result.reads == 3  # the first read was not confirmed by the second
    assert decisions(rig.ac.model) == decisions(source_model(rig))
    assert "ann" not in rig.ac.model.role_users.get("reader", set())


def test_a_source_that_keeps_changing_is_not_used(rig: Rig) -> None:
    f = Follower(rig.config)
    assert f.poll(rig.ac).ok
    before, seq = decisions(rig.ac.model), rig.ac.store.last_seq()
    flip = [False]

    def before_call(n: int, path: str) -> None:  # each read sees bob's role flipped
        if path.endswith("/users?details=true"):
            flip[0] = not flip[0]
            if flip[0]:
                rig.client.grant_roles_to_user(["reader"], "bob")
            else:
                rig.client.revoke_roles_from_user(["reader"], "bob")

    rig.proxy.reset()
    rig.proxy.before = before_call
    result = f.poll(rig.ac)
    assert not result.ok and result.kind == "changed during the read" and result.reads == 3
    assert rig.ac.store.last_seq() == seq and decisions(rig.ac.model) == before


def test_a_read_that_removes_most_of_the_model_is_held_back(rig: Rig, tmp_path: Path) -> None:
    f = Follower(rig.config)
    assert f.poll(rig.ac).ok
    seq = rig.ac.store.last_seq()
    for role in ("reader", "writer"):
        rig.client.delete_role(role)
    result = f.poll(rig.ac)
    assert not result.ok and result.kind == "guarded" and "--allow-mass-removal" in result.error
    assert rig.ac.store.last_seq() == seq
    forced = f.poll(rig.ac, allow_mass_removal=True)
    assert forced.ok and not rig.ac.model.roles


def test_every_other_writer_is_refused_while_following(rig: Rig, tmp_path: Path) -> None:
    assert Follower(rig.config).poll(rig.ac).ok
    seq = rig.ac.store.last_seq()
    with pytest.raises(Followed, match="gravitino metalake 'test'"):
        rig.ac.add_user("zed")
    with pytest.raises(Followed):
        rig.ac.acting("admin", via="rest").grant_role("reader", "user bob")
    with pytest.raises(Followed):
        rig.ac.as_admin("spec").load_model(Model(metalake="test"))
    with pytest.raises(Followed):
        rig.ac.create_metalake("another")
    assert rig.ac.store.last_seq() == seq
    # a sync still records the directory's members (they are not the model's)
    rig.ac.record_external_members()


def test_the_cli_pull_and_status_show_the_source(rig: Rig, tmp_path: Path) -> None:
    config = tmp_path / "pushdown.toml"
    config.write_text(
        f'store = "follow.db"\n[backends.demo]\nkind = "recording"\nstate = "demo.json"\n'
        f'[source]\nkind = "gravitino"\nuri = "{rig.proxy.uri}"\nmetalake = "test"\nuser = "admin"\n'
        'catalog_property = "pushdown.backend"\n[source.catalogs]\nother = "demo"\n'
    )
    runner = CliRunner()
    pulled = runner.invoke(main, ["--config", str(config), "pull"])
    assert pulled.exit_code == 0, pulled.output
    assert "model change(s)" in pulled.output
    shown = runner.invoke(main, ["--config", str(config), "status"])
    assert "source gravitino metalake 'test'" in shown.output and "last good read" in shown.output
    assert "last change" in shown.output and "not enforced" not in shown.output  # other is mapped
    assert "added user ann" in shown.output and "more (pushdown log)" in shown.output
    spec = tmp_path / "s.yaml"
    spec.write_text("users: [zed]\n")
    refused = runner.invoke(main, ["--config", str(config), "apply", "--spec", str(spec)])
    assert refused.exit_code == 1 and "the model follows gravitino metalake 'test'" in refused.output
    rig.proxy.rule = lambda n, m, p: (503, error_body(1002, "RuntimeException", "busy"))
    failed = runner.invoke(main, ["--config", str(config), "pull"])
    assert failed.exit_code == 1 and "server error" in failed.output
    shown = runner.invoke(main, ["--config", str(config), "status", "--json"])
    assert shown.exit_code == 2
    source = json.loads(shown.output)["source"]
    assert source["error_kind"] == "server error" and source["last_good"] is not None


def test_the_rest_service_over_a_followed_store_refuses_changes(rig: Rig, tmp_path: Path) -> None:
    from ..rest.inprocess import site

    (tmp_path / "r").mkdir()
    with site(tmp_path / "r", metalake="test") as s:
        s.ac.follows = "gravitino metalake 'test' at http://elsewhere"
        with s.http("admin") as h:
            answer = h.post("/api/metalakes/test/users", json={"name": "zed"})
            assert answer.status_code == 405
            assert "the model follows gravitino metalake 'test'" in answer.json()["message"]
            assert h.get("/api/metalakes/test/users").status_code == 200  # reads still answer


@pytest.mark.parametrize(
    "source, why",
    [
        ({"kind": "ranger"}, "source.kind"),
        ({"uri": "ftp://x"}, "source.uri"),
        ({"uri": "http://u:p@host"}, "no credentials"),
        ({"token": "abc"}, "must not be written in the file"),
        ({"token": {"env": "T"}}, "not both"),
        ({"interval": "soon"}, "source.interval"),
        ({"catalogs": {"c": "nope"}}, "no such backend"),
        ({"max_removal_share": 2}, "max_removal_share"),
        ({"colour": "red"}, "unknown setting"),
    ],
)
def test_a_bad_source_table_is_one_clear_error(tmp_path: Path, source: dict[str, Any], why: str) -> None:
    from .conftest import follow_config

    with pytest.raises(ConfigError, match=why):
        follow_config(tmp_path, "http://127.0.0.1:1", **source)


def test_what_pushdown_cannot_hold_is_left_out_only_when_that_is_narrower(tmp_path: Path) -> None:
    from pushdown.app.source.gravitino import Snapshot, SourceUnreadable
    from pushdown.app.source.target import to_model

    from .conftest import follow_config

    config = follow_config(tmp_path, "http://127.0.0.1:1")
    assert config.follow is not None
    rows = {("schema", "c.db", "SELECT_VIEW", "ALLOW"), ("schema", "c.db", "SELECT_VIEW", "DENY")}
    snap = Snapshot(
        "test",
        users={"ann": frozenset({"r"})},
        roles={"r": frozenset({*rows, ("schema", "c.db", "SELECT_TABLE", "ALLOW")})},
        catalogs={"c": ("relational", "demo"), "h": ("relational", "hive9")},
        tree=frozenset({("schema", ("c", "db"))}),
        owners={("schema", ("c", "db")): ("eng", "GROUP"), ("catalog", ("c",)): ("zed", "USER")},
    )
    built = to_model(snap, config.follow, config.backends)
    notes = "\n".join(built.notes)
    assert "allow select_view" in notes and "group eng" in notes and "owner zed" in notes
    assert "deny select_view" in notes and "wider" in notes  # the DENY is kept, as a wider one
    assert "names backend 'hive9', which is not configured" in notes
    assert built.model.owners == {} and {str(g) for g in built.model.roles["r"]} == {
        "ALLOW SELECT_TABLE on schema c.db",
        "DENY SELECT_TABLE on schema c.db",
    }
    # a DENY that cannot be expressed: the read is not used at all
    bad = Snapshot("test", roles={"r": frozenset({("table", "nowhere.db.t", "SELECT_TABLE", "DENY")})})
    with pytest.raises(SourceUnreadable, match="cannot be enforced exactly"):
        to_model(bad, config.follow, config.backends)
    # the same as an ALLOW is left out (narrower) and reported
    allow = Snapshot("test", roles={"r": frozenset({("table", "nowhere.db.t", "SELECT_TABLE", "ALLOW")})})
    assert "left out" in "\n".join(to_model(allow, config.follow, config.backends).notes)


def _served_with(rig: Rig, role: str, extra: list[dict[str, Any]]) -> None:
    """From now on the source answers ``role`` with what pushdown serve holds plus ``extra``
    securable objects: what a Gravitino can hold that pushdown serve cannot (views,
    functions, a condition of a later Gravitino)."""
    auth = httpx.BasicAuth("admin", "x")
    body = httpx.get(f"{rig.gravitino.uri}/api/metalakes/test/roles/{role}", auth=auth).json()
    body["role"]["securableObjects"] = [*body["role"]["securableObjects"], *extra]
    answer = (200, json.dumps(body))
    rig.proxy.rule = lambda n, m, p: (
        answer if m == "GET" and p.split("?")[0].endswith(f"/roles/{role}") else None
    )


def _viewer(rig: Rig, user: str = "bob") -> None:
    """Role viewer: USE_CATALOG, USE_SCHEMA and SELECT_TABLE on catalog c, held by ``user``."""
    cat = SecurableObjects.of_catalog("c", [UseCatalog.allow(), UseSchema.allow(), SelectTable.allow()])
    rig.client.create_role("viewer", {}, [cat])
    rig.client.grant_roles_to_user(["viewer"], user)


def _on(type_: str, full: str, name: str, condition: str) -> dict[str, Any]:
    return {"fullName": full, "type": type_.lower(), "privileges": [{"name": name, "condition": condition}]}


def test_n10_a_deny_of_select_view_is_never_dropped(rig: Rig) -> None:
    """N10: a role ALLOWs SELECT_TABLE on a catalog and DENIEs SELECT_VIEW there. pushdown
    holds no views; dropping the DENY made MySQL grant SELECT ON the database and the view
    readable. The DENY is enforced as DENY SELECT_TABLE there (at least as wide), with a note."""
    _viewer(rig)
    assert ("bob", "load_table", "table c.db.t0") in decisions(source_model(rig))  # without the DENY
    _served_with(rig, "viewer", [_on("CATALOG", "c", "select_view", "deny")])
    result = Follower(rig.config).poll(rig.ac)
    assert result.ok, result.error
    allowed = decisions(rig.ac.model)
    assert not {d for d in allowed if d[0] == "bob" and d[1] == "load_table"}, "the DENY was dropped"
    assert ("bob", "load_catalog", "catalog c") in allowed  # the rest of the role came along
    assert any("select_view" in n and "wider" in n for n in result.notes), result.notes
    # what a backend is asked to enforce: no read of any table in c for bob
    rig.ac.sync(full=True)
    held = json.loads(Path(rig.config.backends["demo"].settings["state"]).read_text())
    assert not [row for row in held if row[0] == "bob" and row[1] == "load_table"], held
    assert ["bob", "load_catalog", "catalog c"] in held


@pytest.mark.parametrize(
    "extra",
    [
        _on("CATALOG", "c", "execute_function", "deny"),
        _on("SCHEMA", "c.db", "create_view", "deny"),
        _on("VIEW", "c.db.v", "select_view", "deny"),
        _on("FUNCTION", "c.db.f", "execute_function", "deny"),
        _on("TABLE", "nowhere.db.t", "select_table", "deny"),
    ],
    ids=["function-privilege", "create-view", "view-object", "function-object", "unplaced-table"],
)
def test_a_deny_pushdown_cannot_hold_refuses_the_whole_read(rig: Rig, extra: dict[str, Any]) -> None:
    """A DENY pushdown cannot hold (a privilege it does not enforce, an object it cannot
    place) is never left out: the read is not used, the status names the grant, the
    model stays as it was."""
    f = Follower(rig.config)
    assert f.poll(rig.ac).ok
    before, seq = decisions(rig.ac.model), rig.ac.store.last_seq()
    _viewer(rig)
    _served_with(rig, "viewer", [extra])
    result = f.poll(rig.ac)
    assert not result.ok and result.kind == "cannot be enforced exactly"
    name = extra["privileges"][0]["name"]
    assert "role viewer: deny " + name in (result.error or ""), result.error
    assert rig.ac.store.last_seq() == seq and decisions(rig.ac.model) == before
    status = load_status(rig.ac.store, "")
    assert status.failing and name in (status.last_error or "")
    # the same as an ALLOW is left out (narrower) with a note, and the rest is used
    allow = {**extra, "privileges": [{"name": name, "condition": "allow"}]}
    _served_with(rig, "viewer", [allow])
    used = f.poll(rig.ac)
    assert used.ok and any(f"allow {name}" in n and "left out" in n for n in used.notes), used.notes
    assert ("bob", "load_table", "table c.db.t0") in decisions(rig.ac.model)


def test_an_unreachable_source_says_so(tmp_path: Path) -> None:
    from .conftest import follow_config

    config = follow_config(tmp_path, "http://127.0.0.1:9", timeout=2)
    ac = AccessControl.open(config, push=False, create_store=True)
    try:
        result = Follower(config).poll(ac)
        assert not result.ok and result.kind == "unreachable"
        assert ac.store.last_seq() == 0
    finally:
        ac.close()


def test_a_metalake_the_source_does_not_have_says_so(rig: Rig, tmp_path: Path) -> None:
    from .conftest import follow_config

    (tmp_path / "x").mkdir()
    config = follow_config(tmp_path / "x", rig.proxy.uri, metalake="nosuch")
    ac = AccessControl.open(config, push=False, create_store=True)
    try:
        result = Follower(config).poll(ac)
        assert not result.ok and result.kind == "no such metalake" and "nosuch" in result.error
    finally:
        ac.close()


def test_a_source_answering_401_says_unauthorized(rig: Rig) -> None:
    def fault(r: Rig) -> None:
        no = (401, error_body(1011, "UnauthorizedException", "bad credentials"))
        r.proxy.rule = lambda n, m, p: no

    result = _unchanged_after(rig, fault)
    assert result.kind == "unauthorized"


def test_a_bearer_token_from_a_secret_reference_and_a_real_401(tmp_path: Path) -> None:
    """An oauth-only pushdown serve: the token from { file = ... } is accepted; simple
    authentication is refused with the server's own 401 (unauthorized); the token never
    appears in the status."""
    from ..rest.inprocess import site
    from ..rest.test_auth import settings
    from ..rest.tokens import token
    from .conftest import follow_config

    (tmp_path / "g").mkdir()
    with site(tmp_path / "g", settings(tmp_path / "g", "oauth"), metalake=None) as g:
        secret = token("admin")
        with httpx.Client(base_url=g.uri, headers={"Authorization": f"Bearer {secret}"}) as h:
            assert h.post("/api/metalakes", json={"name": "test"}).status_code == 200
            assert h.post("/api/metalakes/test/users", json={"name": "ann"}).status_code == 200
        (tmp_path / "token").write_text(secret + "\n")
        config = follow_config(tmp_path, g.uri, user=None, token={"file": str(tmp_path / "token")})
        ac = AccessControl.open(config, push=False, create_store=True)
        try:
            assert Follower(config).poll(ac).ok and "ann" in ac.model.users
            simple = follow_config(tmp_path, g.uri)
            refused = Follower(simple).poll(ac)
            assert not refused.ok and refused.kind == "unauthorized"
            assert secret not in (ac.store.get_meta("source_status") or "")
        finally:
            ac.close()
