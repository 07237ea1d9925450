"""The transport as the official client needs it (reference/gravitino-rest.md): the
version, CLOSE, error bodies and their HTTP codes, raw-path segments, enums in any case
in and lower case out, audit times, and bad input refused with a 400 that writes nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pushdown.app.rest.app import split_raw_path
from pushdown.app.rest.routes import ROUTES, find
from pushdown.app.settings.serve import ServeSettings
from pushdown.decide.requirements import OPERATIONS
from pushdown.journal.store import Store

from .inprocess import Site, site

ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
M = "/api/metalakes/test"


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Site]:
    with site(tmp_path, ServeSettings(max_body=4096)) as running:
        with running.http("admin") as h:
            for path, body in (
                (
                    f"{M}/catalogs",
                    {"name": "cat", "type": "RELATIONAL", "provider": "hive", "properties": {}},
                ),
                (f"{M}/catalogs/cat/schemas", {"name": "db"}),
                (f"{M}/catalogs/cat/schemas/db/tables", {"name": "t1", "columns": [{"name": "id"}]}),
            ):
                assert h.post(path, json=body).status_code == 200, path
        yield running


def error(r: httpx.Response, status: int, code: int, type_: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["code"] == code and body["type"] and body["message"], body
    if type_ is not None:
        assert body["type"] == type_, body
    return dict(body)


def test_raw_path_segments_keep_an_encoded_slash_inside_the_segment() -> None:
    assert split_raw_path(b"/api/metalakes/ml/users/al%2Fice") == (
        "api",
        "metalakes",
        "ml",
        "users",
        "al/ice",
    )
    assert split_raw_path(b"/a/cat.db.t%201/") == ("a", "cat.db.t 1")
    assert split_raw_path(b"/") == ()
    assert find("GET", split_raw_path(b"/api/metalakes/ml/users/al/ice"))[0] is None


def test_every_route_names_an_operation_of_the_requirement_table() -> None:
    for route in ROUTES:
        if route.operation not in (None, "load_object"):
            assert route.operation in OPERATIONS, route
    assert len({(r.method, r.template) for r in ROUTES}) == len(ROUTES)


def test_version_and_close(s: Site) -> None:
    with s.http("admin") as h:
        body = h.get("/api/version").json()
        assert body == {"code": 0, "version": {"version": "1.3.0", "compileDate": "", "gitCommit": ""}}
        assert 200 <= h.request("CLOSE", "/").status_code < 300


def test_an_encoded_slash_names_one_user_and_a_bare_one_no_route(s: Site) -> None:
    with s.http("admin") as h:
        assert h.post(f"{M}/users", json={"name": "al/ice"}).status_code == 200
        got = h.get(f"{M}/users/al%2Fice")
        assert got.status_code == 200 and got.json()["user"]["name"] == "al/ice"
        error(h.get(f"{M}/users/al/ice"), 405, 1006, "UnsupportedOperationException")
    assert "al/ice" in s.ac.model.users


def test_reference_curl_shapes_enums_in_any_case_out_lower_case(s: Site) -> None:
    role = {
        "name": "role1",
        "properties": {"k1": "v1"},
        "securableObjects": [
            {
                "fullName": "cat.db.t1",
                "type": "TABLE",
                "privileges": [{"name": "SELECT_TABLE", "condition": "ALLOW"}],
            }
        ],
    }
    with s.http("admin") as h:
        got = h.post(f"{M}/roles", json=role)
        assert got.status_code == 200, got.text
        obj = got.json()["role"]["securableObjects"]
        assert obj == [
            {
                "fullName": "cat.db.t1",
                "type": "table",
                "privileges": [{"name": "select_table", "condition": "allow"}],
            }
        ]
        grant = {"privileges": [{"name": "Select_Table", "condition": "Deny"}]}
        r = h.put(f"{M}/permissions/roles/role1/schema/cat.db/grant", json=grant)
        assert r.status_code == 200, r.text
        assert h.get(f"{M}/objects/schema/cat.db/roles").json() == {"code": 0, "names": ["role1"]}
        assert h.get(f"{M}/objects/table/cat.db.t1/roles").json() == {"code": 0, "names": ["role1"]}
        owner = h.get(f"{M}/owners/table/cat.db.t1").json()
        assert owner == {"code": 0, "owner": {"name": "admin", "type": "user"}}
        assert (
            h.put(f"{M}/owners/table/cat.db.t1", json={"name": "admin", "type": "USER"}).json()["set"] is True
        )
        assert h.get(f"{M}/users/").json()["names"] == ["admin"]  # the reference's trailing slash
        audit = h.get(f"{M}/users/?details=true").json()["users"][0]["audit"]
        assert audit["creator"] == "admin" and ISO_Z.match(audit["createTime"])
        assert ISO_Z.match(h.get(M).json()["metalake"]["audit"]["createTime"])


def test_unsupported_and_unknown_routes(s: Site) -> None:
    with s.http("admin") as h:
        error(h.get(f"{M}/tags"), 405, 1006, "UnsupportedOperationException")
        error(h.patch(M, json={"inUse": False}), 405, 1006)
        error(h.get("/elsewhere"), 404, 1003)


@pytest.mark.parametrize(
    ("path", "body", "needle"),
    [
        (f"{M}/users", b"{not json", "not valid JSON"),
        (f"{M}/users", b'{"name": 5}', '"name"'),
        (f"{M}/users", b'["alice"]', "JSON object"),
        (f"{M}/users", b'{"name": "a\\nb"}', "control character"),
        (f"{M}/groups", b'{"name": ""}', '"name"'),
        (f"{M}/roles", b'{"name": "r", "securableObjects": {"x": 1}}', "securableObjects"),
        (
            f"{M}/roles",
            b'{"name": "r", "securableObjects": [{"fullName": "cat", "type": "catalog",'
            b' "privileges": [{"name": "fly", "condition": "allow"}]}]}',
            "unknown privilege",
        ),
        (
            f"{M}/roles",
            b'{"name": "r", "securableObjects": [{"fullName": "cat", "type": "galaxy", "privileges": []}]}',
            "unknown metadata object type",
        ),
        (f"{M}/permissions/users/admin/grant", b'{"roleNames": []}', "roleNames"),
        (f"{M}/catalogs", b'{"name": "c2", "type": "spaceship"}', '"type"'),
        (f"{M}/users", b'{"name": "' + b"x" * 5000 + b'"}', "larger than 4096 bytes"),
    ],
)
def test_bad_input_is_a_400_with_a_message_and_writes_nothing(
    s: Site, path: str, body: bytes, needle: str
) -> None:
    before = s.seq()
    with s.http("admin") as h:
        method = "PUT" if "permissions" in path else "POST"
        r = h.request(method, path, content=body, headers={"Content-Type": "application/json"})
    assert needle in error(r, 400, 1001)["message"]
    assert s.seq() == before


def test_a_control_character_in_a_path_segment_is_refused(s: Site) -> None:
    before = s.seq()
    with s.http("admin") as h:
        error(h.put(f"{M}/owners/table/cat.db.t%0A1", json={"name": "admin", "type": "USER"}), 400, 1001)
    assert s.seq() == before


def test_a_busy_store_answers_a_retryable_error(tmp_path: Path) -> None:
    with site(tmp_path, busy_timeout=0.2) as running:
        other = Store(tmp_path / "pd.db")
        before = running.seq()
        try:
            with other.write_lock(), running.http("admin") as h:
                r = h.post(f"{M}/users", json={"name": "late"})
        finally:
            other.close()
        assert r.status_code == 503 and r.headers["Retry-After"] == "1"
        assert r.json()["code"] == 1002 and "busy" in r.json()["message"]
        assert running.seq() == before
        with running.http("admin") as h:  # and once the writer is done, the same call succeeds
            assert h.post(f"{M}/users", json={"name": "late"}).status_code == 200


def test_metadata_objects_are_registered_listed_loaded_and_dropped(s: Site) -> None:
    with s.http("admin") as h:
        base = f"{M}/catalogs/cat/schemas/db"
        assert (
            h.post(f"{base}/topics", json={"name": "events", "comment": "c"}).json()["topic"]["comment"]
            == "c"
        )
        fileset = {"name": "raw", "type": "EXTERNAL", "storageLocation": "s3://b/raw"}
        assert h.post(f"{base}/filesets", json=fileset).json()["fileset"]["type"] == "external"
        assert h.get(f"{base}/tables/t1").json()["table"]["columns"] == [{"name": "id"}]
        names = [i["name"] for i in h.get(f"{base}/tables").json()["identifiers"]]
        assert names == ["t1"]
        assert h.get(f"{M}/catalogs/cat").json()["catalog"]["type"] == "relational"
        assert h.get(f"{M}/catalogs?details=true").json()["catalogs"][0]["provider"] == "hive"
        error(h.post(f"{base}/tables", json={"name": "t1"}), 409, 1004, "TableAlreadyExistsException")
        error(h.get(f"{base}/topics/nope"), 404, 1003, "NoSuchTopicException")
        error(h.delete(f"{M}/catalogs/cat/schemas/db"), 409, 1005, "NonEmptySchemaException")
        assert h.delete(f"{base}/topics/events").json() == {"code": 0, "dropped": True}
        assert h.delete(f"{base}/topics/events").json() == {"code": 0, "dropped": False}
        assert h.delete(f"{M}/catalogs/cat/schemas/db?cascade=true").json()["dropped"] is True
    assert {str(o) for o in s.ac.model.objects} == {"catalog cat"}


def test_lists_show_what_the_caller_may_see(s: Site) -> None:
    with s.http("admin") as h:
        for user in ("ann", "bob"):
            assert h.post(f"{M}/users", json={"name": user}).status_code == 200
    with s.http("ann") as h:
        assert h.get(f"{M}/users").json()["names"] == ["ann"]
        assert h.get(f"{M}/catalogs").json()["identifiers"] == []
        assert h.get(f"{M}/roles").json()["names"] == []
        error(h.get(f"{M}/users/bob"), 403, 1008, "ForbiddenException")
        error(h.get(f"{M}/catalogs/cat"), 403, 1008)
        error(h.get(f"{M}/catalogs/cat/schemas"), 403, 1008)
    with s.http(None) as h:  # no header: anonymous, who is in no metalake
        r = error(h.get(f"{M}/users"), 403, 1008)
        assert r["message"].startswith("anonymous may not")
        assert h.get("/api/metalakes").json() == {"code": 0, "metalakes": []}


def test_docs_list_every_route() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "rest.md").read_text()
    missing = [f"{r.method} {r.template}" for r in ROUTES if f"| {r.method} | `{r.template}` |" not in docs]
    assert missing == []


def test_an_unexpected_fault_is_a_500_naming_the_request_never_a_traceback(
    s: Site, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from pushdown.app.rest.call import Call

    def broken(self: Call, operation: str, target: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(Call, "check", broken)
    with s.http("admin") as h:
        r = h.get(f"{M}/users/admin")
    body = error(r, 500, 1002)
    assert (
        r.headers["X-Request-Id"] in body["message"] and "Traceback" not in r.text and "a bug" not in r.text
    )
    assert any(rec.exc_info and r.headers["X-Request-Id"] in rec.getMessage() for rec in caplog.records)
