"""The Ranger Admin stand-in as one object: its store, its HTTP server, its faults, its evaluation."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

from pushdown_lab.ranger_standin.faults import Faults
from pushdown_lab.ranger_standin.policy_evaluation import (
    AccessRequest,
    AccessResult,
    Reuse,
    ServicePolicies,
)
from pushdown_lab.ranger_standin.resources import (
    SELF,
    SELF_AND_ALL_DESCENDANTS,
    PolicyResourceMatcher,
    ServiceDefHelper,
)
from pushdown_lab.ranger_standin.server import StandinHTTPServer
from pushdown_lab.ranger_standin.servicedefs import load_service_defs
from pushdown_lab.ranger_standin.store import Store

__all__ = ["Standin"]

ADMIN_USER = "admin"
ADMIN_PASSWORD = "rangerR0cks!"  # noqa: S105 - the stand-in's own test login (Ranger's sample admin password)


class Standin:
    """A Ranger Admin stand-in on 127.0.0.1; use as a context manager or ``start()`` / ``stop()``."""

    def __init__(
        self,
        *,
        port: int = 0,
        users: dict[str, str] | None = None,
        service_defs_dir: Path | None = None,
        strict_principals: bool = False,
    ) -> None:
        self.store = Store(load_service_defs(service_defs_dir), strict_principals=strict_principals)
        self.users = dict(users) if users is not None else {ADMIN_USER: ADMIN_PASSWORD}
        self.faults = Faults()
        self.port = port
        self._server: StandinHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._log: list[tuple[str, str, int]] = []
        self._lifecycle = threading.RLock()
        #: per (service, zone): the versions its engine was built at, the engine, the position
        #: in the store's journal it was built at
        self._service_policies: dict[
            tuple[str, str], tuple[tuple[int, int, int, str], ServicePolicies, int]
        ] = {}
        #: move an engine by the policies and roles changed since it was built (as a plugin
        #: applies policy deltas) rather than build it from every policy (False: always afresh)
        self.deltas = True
        self._dying: threading.Thread | None = None
        #: per (service, zone): what its last engine was built from (policy_evaluation.Reuse)
        self._reuse: dict[tuple[str, str], Reuse] = {}
        #: the roles in id order, at the count of role changes they were listed at
        self._roles_at: tuple[int, list[dict[str, Any]]] | None = None

    # lifecycle -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The base URL to give ``RangerClient``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def auth(self) -> tuple[str, str]:
        """The (user, password) of the first configured user (``admin`` by default)."""
        user = next(iter(self.users))
        return user, self.users[user]

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> Standin:
        self._await_death()
        with self._lifecycle:
            if self._server is not None:
                return self
            server = StandinHTTPServer(self.port, self.store, self.users, self.faults)
            server.on_die = self._die
            self.port = server.server_address[1]
            self._server = server
            self._thread = threading.Thread(
                target=server.serve_forever, args=(0.05,), name="ranger-standin", daemon=True
            )
            self._thread.start()
            return self

    def stop(self) -> None:
        with self._lifecycle:
            server, self._server = self._server, None
            if server is None:
                return
            server.dead = True
            server.shutdown()
            server.server_close()
            with server.log_lock:
                self._log.extend(server.request_log)
            if self._thread is not None:
                self._thread.join(timeout=5)

    def _await_death(self) -> None:
        dying = self._dying
        if dying is not None and dying is not threading.current_thread():
            dying.join(timeout=5)

    def restart(self) -> Standin:
        """Start again on the same port with the same state (after :meth:`stop` or a die fault)."""
        self._await_death()
        self.stop()
        return self.start()

    def _die(self) -> None:
        self._dying = threading.Thread(target=self.stop, name="ranger-standin-die", daemon=True)
        self._dying.start()

    def __enter__(self) -> Standin:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._await_death()
        self.stop()

    # request accounting ----------------------------------------------------------------
    @property
    def request_log(self) -> list[tuple[str, str, int]]:
        """Every request served so far: (method, path, status), oldest first."""
        current: list[tuple[str, str, int]] = []
        if self._server is not None:
            with self._server.log_lock:
                current = list(self._server.request_log)
        return self._log + current

    def reset_log(self) -> None:
        self._log = []
        if self._server is not None:
            with self._server.log_lock:
                self._server.request_log.clear()

    def call_counts(self) -> Counter[str]:
        """Requests by method (``GET``, ``POST``, ``PUT``, ``DELETE``)."""
        return Counter(method for method, _, _ in self.request_log)

    # convenience -----------------------------------------------------------------------
    def add_principals(self, users: Iterable[str] = (), groups: Iterable[str] = ()) -> None:
        """Users and groups Ranger knows (as usersync would bring them)."""
        with self.store.lock:
            self.store.principals.users.update(users)
            self.store.principals.groups.update(groups)

    def create_service(self, name: str, service_type: str, **configs: Any) -> dict[str, Any]:
        """Create a service directly (as a test's setup; no HTTP call is counted)."""
        return self.store.create_service({"name": name, "type": service_type, "configs": configs})

    # evaluation ------------------------------------------------------------------------
    def zone_of(self, service: str, resource: dict[str, Any]) -> str:
        """The security zone whose resources hold ``resource`` in ``service`` (``""``: none):
        at or below one of the zone's resource sets (recursive where the resource supports it).
        Two zones holding one resource: the first by name (Ranger asks for it to be unique)."""
        with self.store.lock:
            if not self.store.zones:
                return ""
            zones = [z for z in self.store.list_zones({}) if service in z["services"]]
            if not zones:
                return ""
            sdef = self.store.service_defs[self.store.service(service)["type"]]
        helper = ServiceDefHelper(sdef)
        for zone in sorted(zones, key=lambda z: str(z["name"])):
            for spec in zone["services"][service].get("resources") or []:
                resources = {
                    name: {"values": list(values), "isRecursive": _recursive(helper, name)}
                    for name, values in spec.items()
                }
                found = PolicyResourceMatcher(helper, resources).match_type(resource, {}, {})
                if found in (SELF, SELF_AND_ALL_DESCENDANTS):
                    return str(zone["name"])
        return ""

    def service_policies(self, service: str, zone: str = "") -> ServicePolicies:
        """The evaluation of ``service``'s current policies (of security zone ``zone``; ``""``:
        the unzoned ones) and roles: after a write, the last engine moved by the policies and
        roles changed since (the store's journal; a service without zones), else built again
        taking over the evaluators of the policies and the role book entries of the roles that
        did not change."""
        with self.store.lock:
            svc = self.store.service(service)
            sdef = self.store.service_defs[svc["type"]]
            options = json.dumps(sdef.get("options") or {}, sort_keys=True)
            versions = (
                int(svc["policyVersion"]),
                int(svc["roleVersion"]),
                int(sdef.get("version") or 0),
                options,
            )
            cached = self._service_policies.get((service, zone))
            if cached is not None and cached[0] == versions:
                return cached[1]
            at = self.store.journal_at
            if cached is not None and cached[0][2:] == versions[2:] and self.deltas:
                engine = self._moved(service, zone, cached[1], cached[2], svc["type"])
                if engine is not None:
                    self._service_policies[(service, zone)] = (versions, engine, at)
                    return engine
            # the stored objects (the store replaces one on every change, never edits it):
            # the evaluators and role entries of those that did not change are taken over
            policies = self.store.list_policies({"serviceName": service, "zoneName": zone}, copied=False)
            roles = self._roles(self.store.role_changes)
            reuse = self._reuse.setdefault((service, zone), Reuse())
            zones, before = self._built_before(service, zone)
            built = ServicePolicies(
                self.store.service_def(svc["type"]),
                policies,
                roles,
                reuse=reuse,
                built_before=before,
                zone_resources=zones,
            )
            self._service_policies[(service, zone)] = (versions, built, at)
            return built

    def _moved(
        self, service: str, zone: str, engine: ServicePolicies, since: int, service_type: str
    ) -> ServicePolicies | None:
        """``engine`` moved by the policies and roles changed since journal position ``since``,
        as a plugin applies policy deltas, or None: build afresh (a zone of the service, a
        change other than a policy's or a role's; held under the store's lock)."""
        if zone or any(service in z["services"] for z in self.store.zones.values()):
            return None
        changed = self.store.changes_since(since)
        if changed is None:
            return None
        pids, rids = changed
        policies = {}
        for pid in pids:
            policy = self.store.policies.get(pid)
            mine = policy is not None and policy["service"] == service and not policy.get("zoneName")
            policies[pid] = policy if mine else None
        roles = {rid: self.store.roles.get(rid) for rid in rids}
        return engine.moved(self.store.service_defs[service_type], policies, roles)

    def _roles(self, changes: int) -> list[dict[str, Any]]:
        """The stored roles in id order, listed again only after a role changed (``changes``:
        the store's count of them; held under the store's lock)."""
        if self._roles_at is None or self._roles_at[0] != changes:
            self._roles_at = (changes, [role for _, role in sorted(self.store.roles.items())])
        return self._roles_at[1]

    def _built_before(self, service: str, zone: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """What Ranger builds before the policies of ``zone`` in one engine of ``service`` (its
        resource matchers are reused, :class:`~pushdown_lab.ranger_standin.resources.MatcherReuse`):
        the zones' resource sets, then the unzoned policies and those of the zones before it,
        in the order of the download (held under the store's lock)."""
        zones = [z for z in self.store.list_zones({}) if service in z["services"]] if self.store.zones else []
        specs = [spec for z in zones for spec in z["services"][service].get("resources") or []]
        if not zone:
            return specs, []
        everything = self.store.list_policies({"serviceName": service}, copied=False)
        before = [p for p in everything if not p.get("zoneName")]
        for one in zones:
            if one["name"] == zone:
                break
            before += [p for p in everything if p.get("zoneName") == one["name"]]
        return specs, before

    def evaluate(
        self,
        service: str,
        resource: dict[str, str | list[str]],
        access_type: str,
        user: str,
        groups: Iterable[str] = (),
        owner: str | None = None,
    ) -> AccessResult:
        """Ranger's decision for ``user`` (in ``groups``) doing ``access_type`` on ``resource``.

        ``resource`` maps the service definition's resource names to a value (or a list of
        values), e.g. ``{"database": "db1", "table": "t1", "column": "c1"}``. Roles are resolved
        from the stand-in's roles (users, groups, nested roles). ``access_type`` ``""`` or
        ``_any`` asks for any access; ``_admin`` for delegated admin.
        """
        request = AccessRequest(dict(resource), access_type, user, list(groups), owner)
        return self.service_policies(service, self.zone_of(service, dict(resource))).evaluate(request)

    def is_access_allowed(
        self,
        service: str,
        resource: dict[str, str | list[str]],
        access_type: str,
        user: str,
        groups: Iterable[str] = (),
        owner: str | None = None,
    ) -> bool:
        """:meth:`evaluate`'s ``allowed``: True only when a policy allows (undecided is denied)."""
        return self.evaluate(service, resource, access_type, user, groups, owner).allowed


def _recursive(helper: ServiceDefHelper, name: str) -> bool:
    return bool(helper.defs.get(name, {}).get("recursiveSupported"))
