"""The page over plain HTTP (no browser): the same refusals as the REST API, a sign-in that
sends nowhere but this site, and reading that changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest

from pushdown.decide.evaluator import Evaluator
from pushdown.model.securables import METALAKE, ObjectRef

from .site import Site, demo_core, serve


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    ac = demo_core(tmp_path_factory.mktemp("demo"))
    try:
        with serve(ac) as site:
            yield site
    finally:
        ac.close()


def get(site: Site, path: str, user: str | None) -> httpx.Response:
    auth = httpx.BasicAuth(user, "x") if user else None
    return httpx.get(site.uri + path, auth=auth, follow_redirects=False, timeout=30)


def main(r: httpx.Response) -> str:
    return r.text.split("<main>", 1)[1]


def test_a_hidden_object_answers_like_a_missing_one(demo: Site) -> None:
    missing = get(demo, "/ui/object?name=" + quote("table sales.crm.nosuch"), "dave")
    hidden = get(demo, "/ui/object?name=" + quote("table sales.crm.salaries"), "dave")
    assert missing.status_code == hidden.status_code == 404
    assert main(missing) == main(hidden)
    assert get(demo, "/ui/object?name=" + quote("table sales.crm.salaries"), "carol").status_code == 200
    # the read back follows the same rule
    assert get(demo, "/ui/enforcement?name=" + quote("table sales.crm.salaries"), "dave").status_code == 404
    found = get(demo, "/ui/search?q=sal", "dave").json()["results"]
    assert "table sales.crm.salaries" not in found and "table sales.crm.orders" in found


def test_without_credentials_the_page_asks_to_sign_in_and_sends_back_here_only(demo: Site) -> None:
    r = get(demo, "/ui/principal?name=dave", None)
    assert r.status_code == 303 and r.headers["location"].startswith("/ui/login?next=")
    for nxt, where in (("/ui/object", "/ui/object"), ("//evil.example/", "./"), ("/\\evil.example", "./")):
        r = httpx.post(
            demo.uri + "/ui/login",
            content=f"user=dave&next={quote(nxt)}",
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert r.status_code == 303 and r.headers["location"] == where
        assert "httponly" in r.headers["set-cookie"].lower()
    r = httpx.post(
        demo.uri + "/ui/login",
        content="token=not-a-token",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 401 and "set-cookie" not in r.headers  # oauth is off: a token is refused


def test_reading_every_view_changes_nothing(demo: Site) -> None:
    before = demo.ac.store.last_seq()
    for path in (
        "/ui/",
        "/ui/object?name=" + quote("table sales.crm.orders"),
        "/ui/enforcement?name=" + quote("table sales.crm.orders"),
        "/ui/principal?name=alice",
        "/ui/matrix?users=alice&objects=" + quote("table sales.crm.orders"),
        "/ui/backends?plan=1",
        "/ui/audit",
        "/ui/explain?user=alice&op=load_table&target=sales.crm.orders",
    ):
        r = get(demo, path, "admin")
        assert r.status_code == 200, path
        assert "default-src 'self'" in r.headers.get("content-security-policy", "") or path.startswith(
            "/ui/search"
        )
    assert demo.ac.store.last_seq() == before
    assert get(demo, "/api/version", "admin").json()["code"] == 0  # the REST API is as it was


def test_the_read_back_names_accounts_and_neighbours_to_the_metalakes_holders_only(demo: Site) -> None:
    """The demo leaves bob's alter_table on sales.crm.customers unpushed: the admin sees the
    operation; a user who may only load the table sees the backend's state alone."""
    path = "/ui/enforcement?name=" + quote("table sales.crm.customers")
    admin = get(demo, path, "admin")
    assert admin.status_code == 200 and "bob: alter_table" in admin.text
    model = demo.ac.decision_model()
    table = ObjectRef.parse("table sales.crm.customers")
    loaders = [
        u
        for u in sorted(model.users)
        if u not in ("admin", "bob")
        and model.owners.get(METALAKE) != u
        and Evaluator(model).authorize(u, "load_table", table, explain=False).allowed
    ]
    assert loaders, "the demo has a user who may load the table"
    plain = get(demo, path, loaders[0])
    assert plain.status_code == 200
    assert "drift" in plain.text and "bob" not in plain.text and "alter_table" not in plain.text
    assert "shown to the metalake's owner" in plain.text
