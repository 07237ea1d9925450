"""The one module that imports the ``apache-ranger`` client (and ``requests`` under it).

:class:`RangerAPI` wraps ``RangerClient`` and disarms its traps (0.0.12/0.0.13):

- 404 and 503 come back as ``None``, not as errors: a response hook keeps the last
  status, so a ``None`` is told apart — 503 is retried, 404 is :class:`NotFound`, a 204
  (a delete) is success;
- ``grant_role`` / ``revoke_role`` raise ``TypeError`` on Ranger's JSON reply (the
  client's ``RESTResponse`` coerces with the wrong class): the status decides instead;
- no timeout by default: every request gets ``timeout`` seconds;
- ``requests`` reads the environment (proxies, CA bundle) on every request, a scan of
  every variable: it is read once, when the client is made (:func:`_environment`).

503s, timeouts and refused connections are retried with exponential backoff
(``retries`` times); then :class:`~pushdown.errors.TemporaryBackendError`. Any other 4xx
or 5xx is permanent: :class:`~pushdown.errors.PermanentBackendError` with Ranger's own
words (``msgDesc``). Credentials are never logged or put in a message.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import requests
from apache_ranger.client.ranger_client import RangerClient  # type: ignore[import-untyped]
from apache_ranger.exceptions import RangerServiceException  # type: ignore[import-untyped]
from apache_ranger.utils import API, HttpMethod  # type: ignore[import-untyped]
from requests.adapters import HTTPAdapter

from pushdown.errors import PermanentBackendError, TemporaryBackendError

Json = dict[str, Any]
R = TypeVar("R")
PAGE_SIZE = 200
#: Ranger refuses a role naming a user or group it does not know yet (usersync may be
#: behind the model) unless asked to create them
MEMBERS_MAY_BE_NEW = {"createNonExistUserGroup": "true"}


#: the longest reply quoted in an error (a proxy's HTML page is not a reason)
MAX_QUOTED = 500


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_QUOTED else text[:MAX_QUOTED] + f"… ({len(text)} characters)"


class NotFound(PermanentBackendError):
    """Ranger answered 404 for something pushdown expected to exist."""


class _TimeoutAdapter(HTTPAdapter):
    def __init__(self, timeout: float) -> None:
        super().__init__()
        self.timeout = timeout

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: float | tuple[float, float] | tuple[float, None] | None = None,
        verify: bool | str = True,
        cert: bytes | str | tuple[bytes | str, bytes | str] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        wait = self.timeout if timeout is None else timeout
        return super().send(request, stream=stream, timeout=wait, verify=verify, cert=cert, proxies=proxies)


def _environment(session: requests.Session, url: str) -> None:
    """What ``requests`` takes from the environment for ``url`` on every request (its
    proxies, ``NO_PROXY`` applied; the CA bundle of ``REQUESTS_CA_BUNDLE`` or
    ``CURL_CA_BUNDLE``), taken once into ``session``, which then no longer reads it: the
    per-request scan of every variable was a quarter of a small call's time. No netrc is
    read either way: the session always holds its credentials."""
    for scheme, proxy in requests.utils.get_environ_proxies(url).items():
        session.proxies.setdefault(scheme, proxy)
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if bundle and session.verify is True:
        session.verify = bundle
    session.trust_env = False


@dataclass
class Calls:
    """REST calls made, by kind (``read``, ``write``), and retries."""

    reads: int = 0
    writes: int = 0
    retries: int = 0
    by_path: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.reads + self.writes


class RangerAPI:
    def __init__(
        self,
        backend: str,
        url: str,
        user: str,
        password: str,
        *,
        timeout: float = 10.0,
        retries: int = 4,
        backoff: float = 0.1,
        page_size: int = PAGE_SIZE,
    ) -> None:
        self.backend = backend
        self.url = url
        self.client = RangerClient(url, (user, password))
        session = self.client.client_http.session
        adapter = _TimeoutAdapter(timeout)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        session.hooks["response"].append(self._seen)
        _environment(session, url)
        self.retries = retries
        self.backoff = backoff
        self.page_size = page_size
        self.status: int | None = None
        self.body: Any = None
        self.calls = Calls()

    def _seen(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        self.status = response.status_code
        self.body = response.content

    # the retry loop -------------------------------------------------------------------
    def call(
        self,
        what: str,
        fn: Callable[[], R],
        *,
        write: bool = False,
        expect: bool = True,
        unchanged: bool = False,
    ) -> R | None:
        """Run one client call; ``expect``: a ``None`` result with a 2xx status is an error;
        ``unchanged``: a 304 (Not Modified) is an answer (``None``)."""
        delay = self.backoff
        for attempt in range(self.retries + 1):
            self.status = None
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # the client prints failed responses
                    result = fn()
            except (
                requests.Timeout,
                requests.ConnectionError,
                requests.exceptions.ChunkedEncodingError,
            ) as exc:
                problem = f"no answer ({type(exc).__name__})"  # ChunkedEncodingError: it died mid-answer
            except requests.RequestException as exc:  # not a passing fault: never a raw traceback
                raise PermanentBackendError(
                    self.backend, f"Ranger at {self.url}: {what}: {type(exc).__name__}: {_short(str(exc))}"
                ) from None
            except RangerServiceException as exc:
                if exc.statusCode == 503:
                    problem = "503 Service Unavailable"
                else:
                    raise self._permanent(what, exc.statusCode, exc.msgDesc) from None
            except TypeError:
                # grant_role / revoke_role: the reply was JSON; the status tells the outcome
                status = self._last()
                if unchanged and status == 304:
                    self._count(what, write)
                    return None
                if status is not None and 200 <= status < 300:
                    self._count(what, write)
                    return None
                raise self._permanent(what, status, self.body) from None
            else:
                status = self._last()
                if unchanged and status == 304:
                    self._count(what, write)
                    return None
                if status is not None and 200 <= status < 300:
                    if result is None and expect:
                        raise self._permanent(what, status, "an empty answer")
                    self._count(what, write)
                    return result
                if status == 404:
                    self._count(what, write)
                    raise NotFound(self.backend, f"Ranger at {self.url}: {what}: not found (404)")
                if status is not None and status != 503:
                    raise self._permanent(what, status, self.body)
                problem = "503 Service Unavailable" if status == 503 else "no answer"
            if attempt < self.retries:
                self.calls.retries += 1
                time.sleep(delay)
                delay *= 2
        raise TemporaryBackendError(
            self.backend,
            f"Ranger at {self.url}: {what}: {problem} after {self.retries + 1} attempt(s); try again later",
        )

    def _last(self) -> int | None:
        """The status of the last response (set by the response hook)."""
        return self.status

    def _count(self, what: str, write: bool) -> None:
        if write:
            self.calls.writes += 1
        else:
            self.calls.reads += 1
        kind = what.split(" ", 1)[0]
        self.calls.by_path[kind] = self.calls.by_path.get(kind, 0) + 1

    def _permanent(self, what: str, status: int | None, words: Any) -> PermanentBackendError:
        if isinstance(words, bytes):
            words = words.decode("utf-8", "replace")
        if isinstance(words, str):
            with contextlib.suppress(ValueError):
                found = json.loads(words)
                if isinstance(found, dict) and found.get("msgDesc"):
                    words = str(found["msgDesc"])  # Ranger's own words, not its whole reply
        return PermanentBackendError(
            self.backend,
            f"Ranger refused {what} (HTTP {status}): {_short(str(words or '')) or 'no reason given'}",
        )

    # reads ----------------------------------------------------------------------------
    def services(self) -> list[Json]:
        """Every service with its versions: the one cheap "has anything changed" call."""
        return list(self.call("list services", lambda: self.client.find_services()) or [])

    def role_version(self, service: str, known: int) -> int:
        """Ranger's role version, asked as plugins ask (the authenticated download; a 304 when
        it is still ``known``)."""
        path = f"service/roles/secure/download/{urllib.parse.quote(service, safe='')}"
        api = API(path, HttpMethod.GET, 200)
        params = {"lastKnownRoleVersion": known}
        answer = self.call(
            "role version", lambda: self.client.client_http.call_api(api, params), unchanged=True
        )
        if answer is None:
            return known
        return int(dict(answer).get("roleVersion", -1))

    def service_def(self, name: str) -> Json:
        found = self.call(f"get service definition {name!r}", lambda: self.client.get_service_def(name))
        assert found is not None
        return dict(found)

    def service_defs(self) -> list[Json]:
        """Every service definition, in one call (their options: deny items on or off)."""
        params = {"pageSize": 1000}
        found = self.call(
            "list service definitions", lambda: self.client.find_service_defs(params), expect=False
        )
        return [dict(d) for d in found or ()]

    def zones(self) -> list[Json]:
        """Every security zone, in one call."""
        params = {"pageSize": 1000}
        found = self.call(
            "list security zones", lambda: self.client.find_security_zones(params), expect=False
        )
        return [dict(z) for z in found or ()]

    def policies(self, service: str) -> list[Json]:
        return list(
            self._paged(
                f"list policies of service {service!r}",
                lambda p: self.client.get_policies_in_service(service, p),
            )
        )

    def labelled(self, label: str) -> list[Json]:
        """Policies of every service whose labels hold ``label`` (Ranger's search filter
        ``policyLabelsPartial``; the caller keeps the exact label)."""
        return list(
            self._paged(
                f"list policies labelled {label!r}",
                lambda p: self.client.find_policies({**p, "policyLabelsPartial": label}),
            )
        )

    def roles(self) -> list[Json]:
        return list(self._paged("list roles", lambda p: self.client.find_roles(p)))

    def _paged(self, what: str, fn: Callable[[Json], list[Any] | None]) -> Iterator[Json]:
        start = 0
        while True:
            params = {"startIndex": start, "pageSize": self.page_size}
            page = self.call(what, functools.partial(fn, params), expect=False) or []
            yield from (dict(p) for p in page)
            if len(page) < self.page_size:
                return
            start += len(page)

    # writes ---------------------------------------------------------------------------
    def create_policy(self, policy: Json) -> Json:
        return dict(
            self.call(
                f"create policy {policy.get('name')!r}", lambda: self.client.create_policy(policy), write=True
            )
            or {}
        )

    def update_policy(self, pid: int, policy: Json) -> Json:
        what = f"update policy {policy.get('name')!r}"
        return dict(self.call(what, lambda: self.client.update_policy_by_id(pid, policy), write=True) or {})

    def delete_policy(self, pid: int, name: str) -> None:
        self.call(
            f"delete policy {name!r}", lambda: self.client.delete_policy_by_id(pid), write=True, expect=False
        )

    def create_role(self, service: str, role: Json) -> Json:
        what = f"create role {role.get('name')!r}"
        params = dict(MEMBERS_MAY_BE_NEW)
        return dict(self.call(what, lambda: self.client.create_role(service, role, params), write=True) or {})

    def update_role(self, rid: int, role: Json) -> Json:
        what = f"update role {role.get('name')!r}"
        params = dict(MEMBERS_MAY_BE_NEW)
        return dict(self.call(what, lambda: self.client.update_role(rid, role, params), write=True) or {})

    def delete_role(self, rid: int, name: str) -> None:
        self.call(
            f"delete role {name!r}", lambda: self.client.delete_role_by_id(rid), write=True, expect=False
        )

    def grant_role(self, service: str, request: Json) -> None:
        """Add members to roles (``grant_role`` raises TypeError on success: handled)."""
        self.call("grant role", lambda: self.client.grant_role(service, request), write=True, expect=False)

    def revoke_role(self, service: str, request: Json) -> None:
        self.call("revoke role", lambda: self.client.revoke_role(service, request), write=True, expect=False)
