"""What Ranger enforces, for the tests: Ranger's own engine decides, the stand-in's engine is
held equal to it.

``judged(standin, asks)`` hands the judge (:mod:`pushdown_lab.ranger_judge`) what a plugin of
each asked service would download from the stand-in right now (``ServicePolicies`` with its
security zones, and the roles), asks it the whole batch, asks the stand-in's engine the same
questions, and raises :class:`Disagreement` naming every question where the two differ (a
differential check over every draw: 0 disagreements). It returns the judge's answers::

    asks = [("hive", {"database": "sales", "table": "orders"}, "select", "alice", ["analysts"]), ...]
    allowed = [a.allowed for a in judged(standin, asks)]

An engine is loaded into the judge once per service and content of its download (policies,
zones, roles, service definition), so a test asking again after no change costs one batch.
The judge is the run's one (:func:`shared_judge`; the root ``conftest.py``'s ``ranger_judge``
fixture is the same process).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from pushdown_lab.judge_vectors import vector_folder
from pushdown_lab.ranger_judge import Answer, RangerJudge, request
from pushdown_lab.ranger_standin import Standin

__all__ = ["Ask", "Disagreement", "allows", "download", "judged", "shared_judge"]

#: (service, resource, access type, user, groups)
Ask = tuple[str, Mapping[str, Any], str, str, Sequence[str]]

_judge: RangerJudge | None = None
_judge_lock = threading.Lock()
#: engine name -> the versions it was loaded at
_loaded: dict[str, tuple[Any, ...]] = {}


class Disagreement(AssertionError):
    """The stand-in's engine decided otherwise than Ranger's: the stand-in is wrong."""


def shared_judge() -> RangerJudge:
    """The process's one judge, started on first use (about 2 s) and stopped at exit; the
    folder of Ranger's policy-engine vectors is on its classpath (their tag files are read
    from there)."""
    global _judge
    with _judge_lock:
        if _judge is None:
            folder = vector_folder()
            judge = RangerJudge(resources=[folder.parent] if folder else [])
            judge.start()
            atexit.register(judge.stop)
            _judge = judge
        return _judge


def download(standin: Standin, service: str) -> tuple[dict[str, Any], dict[str, Any], tuple[Any, ...]]:
    """(ServicePolicies, RangerRoles, versions) as Ranger Admin's download endpoints would
    answer a plugin of ``service``: unzoned policies at the top, each security zone's under
    ``securityZones``."""
    store = standin.store
    with store.lock:
        svc = store.service(service)
        sdef = store.service_def(svc["type"])
        policies = store.list_policies({"serviceName": service})
        zones = [z for z in store.list_zones({}) if service in z["services"]] if store.zones else []
        roles = store.list_roles({})
        versions = (svc["policyVersion"], svc["roleVersion"], json.dumps(sdef, sort_keys=True, default=str))
    service_policies = {
        "serviceName": service,
        "serviceId": svc["id"],
        "policyVersion": svc["policyVersion"],
        "policies": [p for p in policies if not p.get("zoneName")],
        "serviceDef": sdef,
        "auditMode": "audit-default",
    }
    if zones:
        service_policies["securityZones"] = {
            z["name"]: {
                "zoneName": z["name"],
                "resources": z["services"][service].get("resources") or [],
                "policies": [p for p in policies if p.get("zoneName") == z["name"]],
                "containsAssociatedTagService": False,
            }
            for z in zones
        }
    roles_json = {"serviceName": service, "roleVersion": svc["roleVersion"], "rangerRoles": roles}
    return service_policies, roles_json, versions


def _engine(judge: RangerJudge, standin: Standin, service: str) -> str:
    name = f"standin:{standin.url}:{service}"
    policies, roles, versions = download(standin, service)
    # the content too: a later stand-in on the same port starts from the same versions
    content = hashlib.sha256(json.dumps([policies, roles], sort_keys=True, default=str).encode()).hexdigest()
    key = (id(judge), *versions, content)
    if _loaded.get(name) != key:
        judge.load(name, policies, roles)
        _loaded[name] = key
    return name


def judged(standin: Standin, asks: Sequence[Ask], judge: RangerJudge | None = None) -> list[Answer]:
    """Ranger's answers to ``asks`` over the stand-in's current policies and roles, the
    stand-in's own engine held equal to them (:class:`Disagreement` otherwise)."""
    judge = judge or shared_judge()
    answers: list[Answer | None] = [None] * len(asks)
    by_service: dict[str, list[int]] = {}
    for index, ask in enumerate(asks):
        by_service.setdefault(ask[0], []).append(index)
    for service, indexes in by_service.items():
        engine = _engine(judge, standin, service)
        batch = [request(asks[i][1], asks[i][2], asks[i][3], asks[i][4]) for i in indexes]
        for i, answer in zip(indexes, judge.decide(engine, batch), strict=True):
            answers[i] = answer
    decided = [a for a in answers if a is not None]
    _compare(standin, asks, decided)
    return decided


def _compare(standin: Standin, asks: Sequence[Ask], answers: Sequence[Answer]) -> None:
    differ = []
    for (service, resource, access, user, groups), answer in zip(asks, answers, strict=True):
        got = standin.evaluate(service, dict(resource), access, user, groups)
        if got.allowed != answer.allowed:
            differ.append(
                f"{user} {list(groups)} {access} {service}:{dict(resource)}: Ranger allowed={answer.allowed} "
                f"(policy {answer.policy_id}), the stand-in allowed={got.allowed} (policy {got.policy_id})"
            )
    if differ:
        shown = "\n  ".join(differ[:20])
        raise Disagreement(
            f"the stand-in's engine differs from Ranger's on {len(differ)} of {len(asks)}:\n  {shown}"
        )


def allows(standin: Standin, asks: Sequence[Ask]) -> list[bool]:
    """:func:`judged`'s ``allowed`` (undecided is denied, as Ranger's plugins enforce)."""
    return [a.allowed for a in judged(standin, asks)]
