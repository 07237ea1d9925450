"""The one module that speaks HTTP to a Unity Catalog server (the standard library's
``urllib``). Plain HTTP, not the official ``unitycatalog-client``: that client is
asyncio/aiohttp only and pins aiohttp, pydantic, urllib3 and typing-extensions below the
versions pushdown's other packages install, and the handful of calls used here —
list catalogs, schemas and tables; ``GET`` and ``PATCH /permissions/{type}/{full_name}``
— are the same paths Databricks answers.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

API = "/api/2.1/unity-catalog"
#: the list calls of a schema's other securables: (path, the reply's key, securable type)
LEAF_LISTS = (
    ("/functions", "functions", "function"),
    ("/volumes", "volumes", "volume"),
    ("/models", "registered_models", "registered_model"),
)


class Unreachable(Exception):
    """The server did not answer."""


class Refused(Exception):
    """The server answered with an error: ``status`` and its own words."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class UnityCatalog:
    """A Unity Catalog server at ``url`` (``http://127.0.0.1:8081``), as ``token``'s principal."""

    def __init__(self, url: str, token: str, timeout: float = 30.0) -> None:
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        #: HTTP calls made, for the tests and the benchmark
        self.calls = 0

    def call(self, method: str, path: str, body: Any = None, query: dict[str, str] | None = None) -> Any:
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)  # noqa: S310 - http(s), checked above
        request.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        self.calls += 1
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:  # noqa: S310 - http(s) only
                text = reply.read()
        except urllib.error.HTTPError as exc:
            raise Refused(exc.code, _words(exc.read())) from exc
        except (urllib.error.URLError, OSError) as exc:
            raise Unreachable(str(exc)) from exc
        return json.loads(text) if text else {}

    def _pages(self, path: str, key: str, query: dict[str, str]) -> Iterator[dict[str, Any]]:
        """Every item of a listing, page after page to the last (a page may be short, even
        empty, with more to come: the server filters a page after cutting it). A token the
        server gave before is refused: the listing would never end."""
        token: str | None = None
        seen: set[str] = set()
        while True:
            page = self.call("GET", API + path, query={**query, **({"page_token": token} if token else {})})
            yield from page.get(key) or []
            token = page.get("next_page_token")
            if not token:
                return
            if token in seen:
                raise Refused(502, f"{path} gave page token {token[:40]!r} again: the listing never ends")
            seen.add(str(token))

    def catalogs(self) -> list[str]:
        return [c["name"] for c in self._pages("/catalogs", "catalogs", {})]

    def catalog_owners(self) -> dict[str, str]:
        """Every catalog the server lists to this token, with its owner."""
        return {c["name"]: str(c.get("owner") or "") for c in self._pages("/catalogs", "catalogs", {})}

    def catalog_owner(self, catalog: str) -> str:
        """The owner of ``catalog`` (``GET /catalogs/{name}``: its creator)."""
        quoted = urllib.parse.quote(catalog, safe="")
        return str(self.call("GET", f"{API}/catalogs/{quoted}").get("owner") or "")

    def schemas(self, catalog: str) -> list[str]:
        return [s["name"] for s in self._pages("/schemas", "schemas", {"catalog_name": catalog})]

    def owners(self, catalog: str, schema: str | None = None) -> dict[str, str]:
        """The owner of each schema of ``catalog`` (or each table of ``schema``), by name."""
        if schema is None:
            items = self._pages("/schemas", "schemas", {"catalog_name": catalog})
        else:
            items = self._pages("/tables", "tables", {"catalog_name": catalog, "schema_name": schema})
        return {i["name"]: str(i.get("owner") or "") for i in items}

    def leaves(self, catalog: str, schema: str) -> list[tuple[str, str, str]]:
        """The functions, volumes and registered models of a schema: (securable type, name,
        owner)."""
        query = {"catalog_name": catalog, "schema_name": schema}
        out = []
        for path, key, kind in LEAF_LISTS:
            out += [(kind, i["name"], str(i.get("owner") or "")) for i in self._pages(path, key, query)]
        return out

    def tables(self, catalog: str, schema: str) -> list[str]:
        query = {"catalog_name": catalog, "schema_name": schema}
        return [t["name"] for t in self._pages("/tables", "tables", query)]

    def permissions(self, securable: str, name: str) -> dict[str, set[str]]:
        """Every principal's privileges on one securable (all of them for an owner or the
        metastore admin; the caller's own for anybody else)."""
        quoted = urllib.parse.quote(name, safe="")
        reply = self.call("GET", f"{API}/permissions/{securable}/{quoted}")
        out: dict[str, set[str]] = {}
        for a in reply.get("privilege_assignments") or []:
            out.setdefault(a["principal"], set()).update(a.get("privileges") or [])
        return out

    def storage(self) -> list[tuple[str, str, str]]:
        """The metastore's external locations and credentials: (securable type, name, owner)."""
        lists = (("/external-locations", "external_locations", "external_location"),
                 ("/credentials", "credentials", "credential"))  # fmt: skip
        return [
            (kind, i["name"], str(i.get("owner") or ""))
            for path, key, kind in lists
            for i in self._pages(path, key, {})
        ]

    def metastore(self) -> str:
        """The metastore's id (``GET /metastore_summary``)."""
        return str(self.call("GET", API + "/metastore_summary").get("metastore_id") or "")

    def sees_all(self, securable: str, name: str) -> bool:
        """Whether the server shows this token every principal's grants on ``securable``
        ``name`` rather than only its own: an empty ``PATCH`` (it changes nothing), which
        the open server allows on a catalog to exactly those its ``GET`` shows everything
        (the metastore admin and the catalog's owner, who see every grant below it too), and
        on the metastore to the metastore admin alone. A refusal (403) is ``False``."""
        quoted = urllib.parse.quote(name, safe="")
        try:
            self.call("PATCH", f"{API}/permissions/{securable}/{quoted}", {"changes": []})
        except Refused as exc:
            if exc.status == 403:
                return False
            raise
        return True

    def update(self, securable: str, name: str, principal: str, add: list[str], remove: list[str]) -> None:
        quoted = urllib.parse.quote(name, safe="")
        change = {"principal": principal, "add": add, "remove": remove}
        self.call("PATCH", f"{API}/permissions/{securable}/{quoted}", {"changes": [change]})


def _words(raw: bytes) -> str:
    try:
        body = json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")[:300]
    if isinstance(body, dict):
        return str(body.get("message") or body.get("error_code") or body)[:300]
    return str(body)[:300]
