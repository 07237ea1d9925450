"""The client's traps, against the stand-in: each one handled, and shown to be a trap."""

from __future__ import annotations

import pytest
from apache_ranger.client.ranger_client import RangerClient
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import PermanentBackendError, TemporaryBackendError
from pushdown_ranger.client import NotFound, RangerAPI

pytestmark = pytest.mark.ranger


def api_for(standin: Standin, **kw: float) -> RangerAPI:
    user, password = standin.auth
    return RangerAPI("rg", standin.url, user, password, backoff=0.01, **kw)  # type: ignore[arg-type]


def test_the_bare_client_returns_none_for_503_and_404(ranger_standin: Standin) -> None:
    client = RangerClient(ranger_standin.url, ranger_standin.auth)
    assert client.get_service("nope") is None  # 404: no error
    ranger_standin.faults.fail_next(1)
    assert client.find_services() is None  # 503: no error either


def test_a_503_is_retried_and_then_succeeds(ranger_standin: Standin) -> None:
    ranger_standin.create_service("hive", "hive")
    api = api_for(ranger_standin)
    ranger_standin.faults.fail_next(2)
    assert [s["name"] for s in api.services()] == ["hive"]
    assert api.calls.retries == 2


def test_503_past_the_retries_is_a_temporary_error(ranger_standin: Standin) -> None:
    api = api_for(ranger_standin, retries=2)
    ranger_standin.faults.fail_next(10)
    with pytest.raises(TemporaryBackendError, match="503 Service Unavailable after 3 attempt"):
        api.services()


def test_a_timeout_is_retried(ranger_standin: Standin) -> None:
    ranger_standin.create_service("hive", "hive")
    api = api_for(ranger_standin, timeout=1.0)
    ranger_standin.faults.delay_next(1, 3.0)
    assert len(api.services()) == 1
    assert api.calls.retries >= 1


def test_a_404_is_not_found(ranger_standin: Standin) -> None:
    api = api_for(ranger_standin)
    with pytest.raises(NotFound, match="not found"):
        api.service_def("no-such-type")


def test_a_4xx_is_permanent_with_rangers_own_words(ranger_standin: Standin) -> None:
    api = api_for(ranger_standin)
    policy = {"service": "missing", "name": "p", "resources": {"database": {"values": ["d"]}}}
    with pytest.raises(
        PermanentBackendError, match="Ranger refused create policy 'p' \\(HTTP 400\\)"
    ) as caught:
        api.create_policy(policy)
    assert "missing" in str(caught.value)  # Ranger's message names the unknown service
    assert api.calls.retries == 0


def test_grant_role_raises_type_error_in_the_bare_client_and_not_here(ranger_standin: Standin) -> None:
    ranger_standin.create_service("hive", "hive")
    api = api_for(ranger_standin)
    api.create_role("hive", {"name": "pd_r", "users": [], "groups": [], "roles": []})
    request = {"targetRoles": ["pd_r"], "users": ["alice"], "grantor": "admin"}
    with pytest.raises(TypeError):
        RangerClient(ranger_standin.url, ranger_standin.auth).grant_role("hive", request)
    api.revoke_role("hive", request)
    api.grant_role("hive", {**request, "users": ["bob"]})
    members = {m["name"] for r in api.roles() for m in r["users"]}
    assert members == {"bob"}


def test_lists_are_read_in_pages(ranger_standin: Standin) -> None:
    ranger_standin.create_service("hive", "hive")
    api = api_for(ranger_standin)
    api.page_size = 2
    for i in range(5):
        api.create_role("hive", {"name": f"pd_{i}", "users": [], "groups": [], "roles": []})
    before = api.calls.reads
    assert len(api.roles()) == 5
    assert api.calls.reads - before == 3


def test_a_reply_cut_off_is_retried_and_any_other_request_fault_is_a_clear_error(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    import requests

    api = api_for(ranger_standin, retries=1)

    def cut(*args: object, **kwargs: object) -> None:
        raise requests.exceptions.ChunkedEncodingError("connection broken mid-answer")

    monkeypatch.setattr(api.client, "find_services", cut)
    with pytest.raises(TemporaryBackendError, match=r"no answer \(ChunkedEncodingError\) after 2 attempt"):
        api.services()

    def bad(*args: object, **kwargs: object) -> None:
        raise requests.exceptions.ContentDecodingError("bad gzip")

    monkeypatch.setattr(api.client, "find_services", bad)
    with pytest.raises(PermanentBackendError, match="list services: ContentDecodingError: bad gzip"):
        api.services()


def test_a_refusal_quotes_rangers_words_not_a_whole_page(ranger_standin: Standin) -> None:
    api = api_for(ranger_standin)

    def page() -> None:
        api.status, api.body = 400, b"<html>" + b"x" * 100_000 + b"</html>"

    with pytest.raises(PermanentBackendError) as caught:
        api.call("list services", page)
    assert "HTTP 400" in str(caught.value) and len(str(caught.value)) < 700

    def words() -> None:
        api.status, api.body = 400, b'{"statusCode": 1, "msgDesc": "no such service: x", "messageList": []}'

    with pytest.raises(PermanentBackendError, match=r"\(HTTP 400\): no such service: x$"):
        api.call("list services", words)


def test_the_environment_is_read_once_with_the_proxies_and_ca_bundle_it_names(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``requests`` reads the environment on every request; the client reads it once: the
    proxy for Ranger's URL (none where ``NO_PROXY`` names its host) and the CA bundle, as
    ``requests`` would have used them, then no per-request scan."""
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/ssl/bundle.pem")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    proxied = api_for(ranger_standin).client.client_http.session
    assert proxied.proxies.get("http") == "http://proxy.example:3128"
    assert proxied.verify == "/etc/ssl/bundle.pem" and proxied.trust_env is False
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    assert "http" not in api_for(ranger_standin).client.client_http.session.proxies
    for name in ("NO_PROXY", "HTTP_PROXY", "REQUESTS_CA_BUNDLE"):
        monkeypatch.delenv(name)
    api = api_for(ranger_standin)
    # a proxy named after the client was made is not used (a closed port: it would refuse)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    ranger_standin.create_service("hive", "hive")
    assert [s["name"] for s in api.services()] == ["hive"]
