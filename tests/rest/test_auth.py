"""Authentication like Gravitino's: simple (Basic user:anything, no header = anonymous) and
OAuth2 bearer JWTs (signature, expiry and audience checked), each switchable; refusals are
401 with code 1011 and never repeat the credentials."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pushdown.app.settings.serve import ServeSettings, parse
from pushdown.errors import ConfigError

from .inprocess import Site, site
from .tokens import AUDIENCE, public_key_file, token

M = "/api/metalakes/test"


def settings(tmp: Path, *authenticators: str) -> ServeSettings:
    return parse(
        {
            "authenticators": list(authenticators),
            "jwt_key": {"file": str(public_key_file(tmp))},
            "jwt_algorithm": "RS256",
            "jwt_audience": AUDIENCE,
        },
        "test",
        tmp,
    )


@pytest.fixture
def both(tmp_path: Path) -> Iterator[Site]:
    with site(tmp_path, settings(tmp_path, "simple", "oauth")) as s:
        with s.http("admin") as h:
            assert h.post(f"{M}/users", json={"name": "alice"}).status_code == 200
        yield s


@pytest.fixture
def oauth_only(tmp_path: Path) -> Iterator[Site]:
    # the metalake is created by the service admin's token: Basic is refused here
    with site(tmp_path, settings(tmp_path, "oauth"), metalake=None) as s:
        with httpx.Client(base_url=s.uri, headers=bearer(token("admin"))) as h:
            assert h.post("/api/metalakes", json={"name": "test"}).status_code == 200
            assert h.post(f"{M}/users", json={"name": "alice"}).status_code == 200
        yield s


def bearer(tok: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {tok}"}


def get_self(s: Site, headers: dict[str, str]) -> httpx.Response:
    with httpx.Client(base_url=s.uri, headers=headers) as h:
        return h.get(f"{M}/users/alice")


def unauthorized(r: httpx.Response, needle: str) -> dict[str, Any]:
    assert r.status_code == 401, r.text
    body = r.json()
    assert body["code"] == 1011 and body["type"] == "UnauthorizedException" and needle in body["message"]
    assert "WWW-Authenticate" in r.headers
    return dict(body)


def test_simple_basic_names_the_user_and_no_header_is_anonymous(both: Site) -> None:
    basic = base64.b64encode(b"alice:whatever").decode()
    assert get_self(both, {"Authorization": f"Basic {basic}"}).json()["user"]["name"] == "alice"
    r = get_self(both, {})
    assert r.status_code == 403 and r.json()["message"].startswith("anonymous may not")
    unauthorized(get_self(both, {"Authorization": "Basic %%%"}), "malformed Basic")


def test_a_valid_token_names_its_subject(both: Site) -> None:
    r = get_self(both, bearer(token("alice")))
    assert r.status_code == 200 and r.json()["user"]["name"] == "alice"


@pytest.mark.parametrize(
    ("tok", "needle"),
    [
        (lambda: token("alice", ttl=-120), "expired"),
        (lambda: token("alice", audience="someone-else"), "audience"),
        (lambda: token("alice", key="attacker"), "signature"),
        (lambda: token("alice").rsplit(".", 1)[0] + ".", "signature"),
        (lambda: "not-a-token", "malformed"),
        (
            lambda: (
                base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').decode().rstrip("=")
                + "."
                + base64.urlsafe_b64encode(f'{{"sub":"alice","aud":"{AUDIENCE}","exp":9999999999}}'.encode())
                .decode()
                .rstrip("=")
                + "."
            ),
            "",
        ),
    ],
    ids=["expired", "wrong-audience", "other-key", "no-signature", "garbage", "alg-none"],
)
def test_a_bad_token_is_refused(both: Site, tok: Any, needle: str) -> None:
    text = tok()
    body = unauthorized(get_self(both, bearer(text)), needle)
    assert text not in body["message"]


def test_a_deployment_may_refuse_simple(oauth_only: Site) -> None:
    basic = base64.b64encode(b"alice:x").decode()
    unauthorized(
        get_self(oauth_only, {"Authorization": f"Basic {basic}"}), "simple authentication is switched off"
    )
    unauthorized(get_self(oauth_only, {}), "authentication required")
    assert get_self(oauth_only, bearer(token("alice"))).status_code == 200


def test_bearer_tokens_are_refused_when_oauth_is_off(tmp_path: Path) -> None:
    with site(tmp_path) as s:
        unauthorized(get_self(s, bearer(token("alice"))), "bearer tokens are not accepted")


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ({"port": 70000}, "serve.port"),
        ({"tls_cert": "a.pem"}, "go together"),
        ({"authenticators": ["kerberos"]}, "authenticators"),
        ({"authenticators": ["oauth"]}, "jwt_key"),
        ({"jwt_key": "the-secret-itself"}, "never the key itself"),
        ({"jwt_algorithm": "none"}, "jwt_algorithm"),
        ({"listen": 1}, "unknown setting"),
    ],
)
def test_serve_settings_are_checked(tmp_path: Path, table: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        parse(table, "pushdown.toml", tmp_path)
