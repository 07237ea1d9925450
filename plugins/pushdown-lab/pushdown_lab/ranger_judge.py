"""Ranger's own policy engine (``RangerPolicyEngineImpl``, Ranger 2.9.0) as a judge.

A long-lived Java process of ours (``java/RangerJudge.java``, compiled with ``javac``
against the engine's jars on first use and cached) reads JSON lines on stdin and answers
one line per command on stdout; no socket. It holds named engines, each built from what
a Ranger Admin hands its plugins: the ``ServicePolicies`` JSON of
``/service/plugins/policies/download/{svc}`` and the roles of ``/service/roles/download/{svc}``
(the stand-in serves both)::

    with RangerJudge() as judge:                      # about 2 s: the JVM and the engine's classes
        judge.load("hive", service_policies, roles)
        judge.decide("hive", [request(...), ...])     # -> [Answer, ...] in order
        judge.validate(policy, service_def, service)  # Ranger's RangerPolicyValidator: None or why

The jars come from Maven Central through :mod:`pushdown_lab.maven`; the process ends when
its stdin closes (the context manager closes it; a dead test process closes it too).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from pushdown_lab.maven import RANGER_ENGINE, MavenUnavailable, cache_dir, classpath

__all__ = ["Answer", "JudgeUnavailable", "RangerJudge", "request"]

MAIN = "RangerJudge"
#: our Java sources: the judge, and the one condition evaluator Ranger's vectors name that
#: ships only in Ranger's test sources
SOURCES = (f"{MAIN}.java", "RangerSimpleMatcher.java", "PolicyValidation.java")


class JudgeUnavailable(RuntimeError):
    """The judge cannot run here (no JDK, no Maven, no jars) or it failed; the message says why."""


@dataclass(frozen=True)
class Answer:
    """What Ranger's engine decided for one request (``RangerAccessResult``)."""

    allowed: bool
    determined: bool
    audited: bool
    audit_determined: bool
    policy_id: int
    reason: str | None = None


def request(
    resource: Mapping[str, str | Sequence[str]],
    access_type: str,
    user: str,
    groups: Iterable[str] = (),
    roles: Iterable[str] | None = None,
    *,
    owner: str | None = None,
    context: Mapping[str, Any] | None = None,
    matching_scope: str | None = None,
    cluster: str | None = None,
) -> dict[str, Any]:
    """One access request in the JSON shape of Ranger's ``RangerAccessRequestImpl``."""
    raw: dict[str, Any] = {
        "resource": {"elements": dict(resource), **({"ownerUser": owner} if owner else {})},
        "accessType": access_type,
        "user": user,
        "userGroups": sorted(groups),
        "context": dict(context or {}),
    }
    if roles is not None:
        raw["userRoles"] = sorted(roles)
    if matching_scope:
        raw["resourceMatchingScope"] = matching_scope
    if cluster:
        raw["clusterName"] = cluster
    return raw


def _java(name: str) -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).is_file():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if not found:
        raise JudgeUnavailable(f"{name} not found: install a JDK (17 works) or set JAVA_HOME")
    return found


def judge_classes(jars: Sequence[Path]) -> Path:
    """The compiled judge, keyed by its source and the jars; compiled once (about 3 s)."""
    folder = importlib.resources.files("pushdown_lab").joinpath("java")
    sources = {name: folder.joinpath(name).read_bytes() for name in SOURCES}
    key = hashlib.sha256(b"".join(sources.values()) + "\n".join(p.name for p in jars).encode()).hexdigest()
    target = cache_dir() / "ranger-judge" / key[:16]
    if (target / f"{MAIN}.class").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix="build-", dir=target.parent))
    try:
        for name, source in sources.items():
            (build / name).write_bytes(source)
        cp = os.pathsep.join(str(j) for j in jars)
        done = subprocess.run(  # noqa: S603 - fixed arguments, no shell
            [
                _java("javac"),
                "-nowarn",
                "-d",
                str(build),
                "-cp",
                cp,
                *(str(build / name) for name in sources),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise JudgeUnavailable(f"compiling the Ranger judge failed: {done.stderr[-2000:]}")
        try:
            build.rename(target)
        except OSError:  # another process won the race: its copy is the same
            pass
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return target


class RangerJudge:
    """The judge process; commands are answered in order, one at a time (thread-safe)."""

    def __init__(self, log: Path | None = None, resources: Sequence[Path] = ()) -> None:
        """``resources``: folders put on the judge's classpath (files a service definition's
        context enrichers name, such as a tag file ``/policyengine/resourceTags.json``)."""
        self._log_path = log
        self._resources = list(resources)
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> RangerJudge:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        try:
            jars = classpath(RANGER_ENGINE)
        except MavenUnavailable as exc:
            raise JudgeUnavailable(str(exc)) from exc
        classes = judge_classes(jars)
        cp = os.pathsep.join([str(classes), *(str(r) for r in self._resources), *(str(j) for j in jars)])
        log: IO[str] | int = self._log_path.open("a") if self._log_path else subprocess.DEVNULL
        self._process = subprocess.Popen(  # noqa: S603 - fixed arguments, no shell
            [_java("java"), "-Xss4m", "-cp", cp, MAIN],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            encoding="utf-8",
        )
        ready = self._read()
        if not ready.get("ok"):
            raise JudgeUnavailable(f"the Ranger judge did not start: {ready}")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin:
            process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout:
            process.stdout.close()

    def _read(self) -> dict[str, Any]:
        assert self._process is not None and self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            raise JudgeUnavailable(f"the Ranger judge exited (status {self._process.poll()})")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def _call(self, command: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._process is None or self._process.stdin is None:
                raise JudgeUnavailable("the Ranger judge is not running")
            self._process.stdin.write(json.dumps(command) + "\n")
            self._process.stdin.flush()
            reply = self._read()
        if not reply.get("ok"):
            raise JudgeUnavailable(f"the Ranger judge failed on {command['op']}: {reply.get('error')}")
        return reply

    def load(
        self,
        engine: str,
        service_policies: Mapping[str, Any],
        roles: Mapping[str, Any] | None = None,
        *,
        config: Mapping[str, str] | None = None,
        service_type: str | None = None,
        base: str | None = None,
    ) -> None:
        """Build engine ``engine`` from Admin's download JSON (``base``: apply the policy
        deltas in ``service_policies`` to that engine instead, as a plugin does)."""
        command: dict[str, Any] = {"op": "load", "engine": engine, "servicePolicies": service_policies}
        if roles is not None:
            command["roles"] = roles
        if config:
            command["config"] = dict(config)
        if service_type:
            command["serviceType"] = service_type
        if base:
            command["base"] = base
        self._call(command)

    def validate(
        self,
        policy: Mapping[str, Any],
        service_def: Mapping[str, Any],
        service: Mapping[str, Any],
        *,
        policies: Sequence[Mapping[str, Any]] = (),
        zones: Sequence[Mapping[str, Any]] = (),
        update: bool = False,
    ) -> str | None:
        """Ranger's own RangerPolicyValidator on ``policy`` (a create, or with ``update`` an
        update) over a store holding ``service``, its definition, ``policies`` and ``zones``:
        None when it accepts the policy, else its message (``error code[3023]`` and the like)."""
        reply = self._call(
            {
                "op": "validate",
                "serviceDef": service_def,
                "service": service,
                "policies": list(policies),
                "zones": list(zones),
                "policy": policy,
                "action": "update" if update else "create",
            }
        )
        return None if reply.get("valid") else str(reply.get("message"))

    def drop(self, engine: str) -> None:
        self._call({"op": "drop", "engine": engine})

    def decide(self, engine: str, requests: Sequence[Mapping[str, Any]]) -> list[Answer]:
        """Ranger's answers to ``requests`` (see :func:`request`), in order."""
        return [
            Answer(
                allowed=bool(a["allowed"]),
                determined=bool(a["determined"]),
                audited=bool(a["audited"]),
                audit_determined=bool(a["auditDetermined"]),
                policy_id=int(a["policyId"]),
                reason=a.get("reason"),
            )
            for a in self.decide_raw(engine, requests)
        ]

    def decide_raw(self, engine: str, requests: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The judge's answers as it sends them: with ``"policyType": 1`` in a request also
        ``maskType``, ``maskCondition``, ``maskedValue``; with 2 ``filterExpr``; a request with
        ``"resourceAccessInfo": true`` is answered with ``allowedUsers``, ``allowedGroups``,
        ``deniedUsers``, ``deniedGroups`` instead."""
        if not requests:
            return []
        reply = self._call({"op": "decide", "engine": engine, "requests": list(requests)})
        answers: list[dict[str, Any]] = reply["answers"]
        return answers
