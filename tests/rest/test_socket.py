"""Robust at the socket (issue 24): every input, at any byte, gets a JSON 4xx and nothing
written; the log stays one line per event; a slow or half-sent request cannot hold a
connection; a weak token key is refused before the server starts."""

from __future__ import annotations

import base64
import io
import json
import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pushdown.app.rest.auth import Authenticator
from pushdown.app.service.logs import JsonFormatter, TextFormatter
from pushdown.app.settings.serve import ServeSettings, parse
from pushdown.errors import ConfigError
from pushdown.model.text import MAX_NAME

from .conftest import init_store, serving, wait_for
from .inprocess import Site, site

M = "/api/metalakes/test"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Site]:
    with site(tmp_path) as running:
        yield running


def json_error(r: httpx.Response, status: int) -> dict[str, object]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert body["code"] == 1001 and body["message"]
    return body


def post(s: Site, path: str, raw: bytes, **headers: str) -> httpx.Response:
    with s.http("admin") as h:
        return h.post(path, content=raw, headers={**JSON, **headers})


def test_a_lone_surrogate_in_a_json_name_is_a_json_400(s: Site) -> None:
    before = s.seq()
    for raw in (b'{"name": "\\ud800"}', b'{"name": "a\\udfffb"}', b'{"name": "ok", "x": ["\\ud83d"]}'):
        assert "surrogate" in str(json_error(post(s, f"{M}/users", raw), 400)["message"])
    raw = b'{"name": "r", "properties": {"\\udc00": "v"}}'
    json_error(post(s, f"{M}/roles", raw), 400)
    assert s.seq() == before


def test_a_number_of_thousands_of_digits_is_a_json_400(s: Site) -> None:
    before = s.seq()
    for number in (b"1" * 5000, b"-" + b"9" * 4400, b"1" * 4400 + b".5", b"1e" + b"9" * 50):
        raw = b'{"name": "big", "properties": {}, "x": ' + number + b"}"
        assert "digits" in str(json_error(post(s, f"{M}/users", raw), 400)["message"])
    json_error(post(s, f"{M}/users", b'{"name": "n", "x": NaN}'), 400)
    assert s.seq() == before


def test_deep_nesting_is_a_json_400(s: Site) -> None:
    before = s.seq()
    for depth in (40, 5000, 200_000):
        raw = b'{"name": "deep", "x": ' + b"[" * depth + b"]" * depth + b"}"
        json_error(post(s, f"{M}/users", raw), 400)
    assert s.seq() == before


def test_names_longer_than_gravitino_limit_are_refused_and_the_longest_can_be_deleted(s: Site) -> None:
    before = s.seq()
    with s.http("admin") as h:
        for length in (MAX_NAME + 1, 200_000):
            for path in (f"{M}/roles", f"{M}/users", f"{M}/groups"):
                r = h.post(path, json={"name": "r" * length, "securableObjects": []})
                assert str(MAX_NAME) in str(json_error(r, 400)["message"])
        r = h.post(f"{M}/catalogs", json={"name": "c" * (MAX_NAME + 1), "type": "RELATIONAL"})
        json_error(r, 400)
        assert s.seq() == before
        longest = "é" * MAX_NAME  # characters, not bytes
        assert h.post(f"{M}/roles", json={"name": longest, "securableObjects": []}).status_code == 200
        assert h.get(f"{M}/roles/{longest}").status_code == 200
        assert h.delete(f"{M}/roles/{longest}").json()["dropped"] is True
        json_error(h.get(f"{M}/roles/{'x' * 5000}"), 400)


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",
        "text/plain; charset=utf-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ],
)
def test_a_cross_site_post_without_json_content_type_is_refused_unread(
    s: Site, content_type: str | None
) -> None:
    before = s.seq()
    headers = {} if content_type is None else {"Content-Type": content_type}
    with s.http("admin") as h:
        request = h.build_request("POST", f"{M}/users", content=b'{"name": "eve"}', headers=headers)
        assert content_type is not None or "content-type" not in request.headers
        r = h.send(request)
        assert "application/json" in str(json_error(r, 415)["message"])
        assert h.get(f"{M}/users/eve").status_code == 404
    assert s.seq() == before
    assert post(s, f"{M}/users", b'{"name": "eve"}', **{"Content-Type": "application/json; charset=utf-8"})


@pytest.mark.parametrize(
    ("algorithm", "size", "ok"),
    [
        ("HS256", 3, False),
        ("HS256", 31, False),
        ("HS256", 32, True),
        ("HS384", 47, False),
        ("HS512", 63, False),
    ],
)
def test_an_hmac_key_shorter_than_its_hash_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch, algorithm: str, size: int, ok: bool
) -> None:
    monkeypatch.setenv("PD_TEST_SECRET", "k" * size)
    settings = ServeSettings(
        authenticators=("oauth",),
        jwt_key={"env": "PD_TEST_SECRET"},
        jwt_algorithm=algorithm,
        jwt_audience="a",
    )
    if ok:
        assert Authenticator.from_settings(settings).key is not None
    else:
        with pytest.raises(ConfigError, match=f"at least {int(algorithm[2:]) // 8} bytes"):
            Authenticator.from_settings(settings)


def test_a_line_separator_in_a_basic_user_never_reaches_a_log_raw(s: Site) -> None:
    text, as_json = io.StringIO(), io.StringIO()
    handlers = [logging.StreamHandler(text), logging.StreamHandler(as_json)]
    handlers[0].setFormatter(TextFormatter("%(levelname)s %(name)s: %(message)s"))
    handlers[1].setFormatter(JsonFormatter())
    served = logging.getLogger("pushdown.serve")
    level = served.level
    served.setLevel(logging.INFO)
    for handler in handlers:
        served.addHandler(handler)
    try:
        for user in ("ann\u2028INFO forged: admin granted", "ann\u2029x", "ann\u0085x", "ann\nx"):
            basic = base64.b64encode(f"{user}:pw".encode()).decode()
            with httpx.Client(base_url=s.uri) as h:
                r = h.get(f"{M}/users", headers={"Authorization": f"Basic {basic}"})
            assert r.status_code == 401 and r.json()["code"] == 1011
    finally:
        for handler in handlers:
            served.removeHandler(handler)
        served.setLevel(level)
    for out in (text.getvalue(), as_json.getvalue()):
        assert out and all(ch not in out for ch in "\u2028\u2029\u0085")
        assert len(out.splitlines()) == 4 and "forged" not in out
    record = logging.makeLogRecord({"msg": "user %s", "args": ("a\u2028b\nc\u202ed",), "levelname": "INFO"})
    line = TextFormatter("%(message)s").format(record)
    assert line == "user a\\u2028b\\nc\\u202ed"
    assert "\u2028" not in JsonFormatter().format(record)


def test_serve_timeout_settings_are_checked(tmp_path: Path) -> None:
    got = parse(
        {"header_timeout": 2, "body_timeout": 3.5, "keep_alive_timeout": 1, "max_connections": 10},
        "f",
        tmp_path,
    )
    assert (got.header_timeout, got.body_timeout, got.keep_alive_timeout, got.max_connections) == (
        2,
        3.5,
        1,
        10,
    )
    for key, bad in (
        ("header_timeout", 0),
        ("body_timeout", "5"),
        ("max_connections", 1.5),
        ("max_connections", 0),
    ):
        with pytest.raises(ConfigError, match=f"serve.{key}"):
            parse({key: bad}, "f", tmp_path)


def _open(port: int, data: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    if data:
        sock.sendall(data)
    return sock


def _closed(sock: socket.socket) -> bool:
    sock.settimeout(0.01)
    try:
        return sock.recv(65536) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def _answer(sock: socket.socket) -> bytes:
    sock.settimeout(30)
    out = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    return out


def test_half_sent_requests_are_closed_and_connections_are_capped(tmp_path: Path) -> None:
    config = tmp_path / "pushdown.toml"
    config.write_text(
        'store = "pd.db"\n[access]\nservice_admins = ["admin"]\n'
        "[serve]\nheader_timeout = 1\nbody_timeout = 1\nkeep_alive_timeout = 1\nmax_connections = 40\n"
    )
    init_store(config)
    with serving(config, tmp_path / "serve.log") as server:
        uri = server.ready()
        port = int(uri.rsplit(":", 1)[1])
        heads = (
            b"",
            b"GET /api/vers",
            b"GET /api/version HTTP/1.1\r\nHost: x\r\n",
            b"POST /api/metalakes HTTP/1.1\r\nHost: x\r\n" + b"X-A: b\r\n" * 20,
        )
        half = [_open(port, head) for head in heads for _ in range(5)]
        started = time.monotonic()
        answers = [_answer(c) for c in half]
        assert time.monotonic() - started < 10
        assert [a[:12] for a in answers] == [b"HTTP/1.1 408"] * len(answers)
        for answer in answers:  # each told why, in Gravitino's error shape, then closed
            assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
            assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["code"] == 1001
        body = _open(
            port,
            b"POST /api/metalakes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"name": ',
        )
        answer = _answer(body)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["code"] == 1001
        garbage = _open(port, b"\x16\x03\x01\x00\xa5 not http\r\n\r\n")
        answer = _answer(garbage)
        assert answer.startswith(b"HTTP/1.1 400") and b'"code": 1001' in answer
        held = [_open(port, b"GET /api/ve") for _ in range(60)]
        wait_for(lambda: sum(_closed(c) for c in held) >= 20, 5, "connections beyond the cap are closed")
        for c in [*half, body, garbage, *held]:
            c.close()
        with httpx.Client(base_url=uri) as h:  # and the server still answers
            wait_for(lambda: h.get("/api/version").status_code == 200, 15, "serves again")
        assert server.stop() == 0
    assert "Traceback" not in (tmp_path / "serve.log").read_text()


def test_an_answer_always_encodes_even_text_that_is_not_utf8() -> None:
    from pushdown.app.rest.app import Answer

    body = Answer({"code": 1001, "message": "name '\ud800' refused"}, 400).body
    assert json.loads(body) == {"code": 1001, "message": "name '\ud800' refused"}
    assert b"\\ud800" in body
