"""Run Apache Gravitino's own Python-client integration tests against ``pushdown serve``.

The tests (apache/gravitino ``clients/client-python/tests/integration/``, tag v1.3.0) are
Gravitino's, under the Apache License; they are not in this repository, and the PyPI sdist
of ``apache-gravitino`` does not ship them. They are fetched once into a per-machine cache
(``$PUSHDOWN_CACHE`` or ``~/.cache/pushdown``), from, in this order:

1. ``--source DIR``: a git clone of apache/gravitino that has the tag (``git archive``);
2. GitHub's archive of the tag (``codeload.github.com``), only the tests' folder kept.

The tests expect a Gravitino server at ``http://localhost:8090`` that was started by
someone else (``START_EXTERNAL_GRAVITINO=true``). A small shim of ours (``conftest.py``
written next to them, never a change to their files) points every client they make at the
``pushdown serve`` this script starts on a free port, as the tests' users ``anonymous`` and
``test`` (simple authentication), the service admins of that fresh store, as the tests
configure Gravitino (``gravitino.authorization.serviceAdmins``); the server restart they
ask for after rewriting ``gravitino.conf`` is a no-op (pushdown serve always authorizes).

    python scripts/gravitino_client_suite.py [--source DIR] [--per-module] [-- PYTEST ARGS]

All modules run against one server, as Gravitino's CI runs them; ``--per-module`` gives
each module a fresh store (pushdown serves one metalake per store, and a module that
leaves its metalake behind, as ``test_owner`` does once it gave the metalake away, would
otherwise refuse every later module's metalake).

prints pytest's summary and a last line ``gravitino client tests: PASSED/TOTAL passed``;
exit status 0 when every selected test passed.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

TAG = "v1.3.0"
FOLDER = "clients/client-python/tests/integration"
ARCHIVE = f"https://codeload.github.com/apache/gravitino/tar.gz/refs/tags/{TAG}"
#: the modules about what pushdown serves: users, groups, roles, owners, metalakes, simple auth
MODULES = (
    "tests/integration/test_user.py",
    "tests/integration/test_group_management.py",
    "tests/integration/test_role_management.py",
    "tests/integration/test_owner.py",
    "tests/integration/test_metalake.py",
    "tests/integration/auth/test_simple_auth_client.py",
)
ROOT = Path(__file__).resolve().parents[1]

SHIM = '''"""pushdown's shim: every client the tests make talks to PUSHDOWN_GRAVITINO_URI."""
import os

from gravitino.utils import http_client

_init = http_client.HTTPClient.__init__


def _pointed(self, host, **kwargs):
    if host.rstrip("/") == "http://localhost:8090":
        host = os.environ["PUSHDOWN_GRAVITINO_URI"]
    _init(self, host, **kwargs)


http_client.HTTPClient.__init__ = _pointed


def pytest_collection_modifyitems(config, items):
    """Gravitino runs these with ``python -m unittest``: only unittest test cases are tests
    (pytest would also collect the mixin ``TestCommonAuth`` on its own)."""
    import unittest

    items[:] = [i for i in items if i.cls is not None and issubclass(i.cls, unittest.TestCase)]


def _restart_server(cls):
    """The tests switch authorization on in gravitino.conf and restart the server: pushdown
    serve always authorizes, with the same service admins; nothing to restart."""


from tests.integration.integration_test_env import IntegrationTestEnv  # noqa: E402

IntegrationTestEnv.restart_server = classmethod(_restart_server)
'''


def cache_dir() -> Path:
    base = os.environ.get("PUSHDOWN_CACHE") or str(Path.home() / ".cache" / "pushdown")
    return Path(base) / f"gravitino-client-tests-{TAG}"


def _keep(member: tarfile.TarInfo, prefix: str) -> str | None:
    """The member's path below the tests' folder, or None when it is elsewhere."""
    name = member.name.split("/", 1)[1] if "/" in member.name else ""  # the archive's top folder
    if not name.startswith(prefix + "/") or ".." in name.split("/"):
        return None
    if not (member.isfile() or member.isdir()):
        return None
    return name[len(prefix) + 1 :]


def _extract(tar: tarfile.TarFile, into: Path, strip_top: bool) -> None:
    for member in tar.getmembers():
        if not strip_top:
            member.name = "top/" + member.name
        rel = _keep(member, FOLDER)
        if rel is None or not member.isfile():
            continue
        target = into / "tests" / "integration" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        data = tar.extractfile(member)
        assert data is not None
        target.write_bytes(data.read())


def fetch(source: Path | None) -> Path:
    """The cache folder holding ``tests/integration`` and our shim; filled once."""
    where = cache_dir()
    if (where / "tests" / "integration" / "test_user.py").exists():
        _write_shim(where)
        return where
    with tempfile.TemporaryDirectory() as tmp:
        staging = Path(tmp) / "staging"
        if source is not None:
            raw = subprocess.run(  # noqa: S603 (git, with our own arguments)
                ["git", "-C", str(source), "archive", "--format=tar", TAG, FOLDER],  # noqa: S607
                check=True,
                capture_output=True,
            ).stdout
            with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
                _extract(tar, staging, strip_top=False)
        else:
            with urllib.request.urlopen(ARCHIVE, timeout=120) as answer:
                raw = answer.read()
            with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tar:
                _extract(tar, staging, strip_top=True)
        (staging / "tests" / "__init__.py").write_text("")
        where.parent.mkdir(parents=True, exist_ok=True)
        staging.rename(where)
    _write_shim(where)
    return where


def _write_shim(where: Path) -> None:
    (where / "conftest.py").write_text(SHIM)


def _env(extra: dict[str, str]) -> dict[str, str]:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, **extra}


def run(tests: Path, modules: tuple[str, ...], pytest_args: list[str]) -> tuple[int, int, int]:
    """Start ``pushdown serve`` on a fresh store, run ``modules``; (status, passed, total)."""
    sys.path.insert(0, str(ROOT))
    from tests.rest.conftest import init_store, serving

    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "pushdown.toml"
        config.write_text('store = "pd.db"\n[access]\nservice_admins = ["anonymous", "test"]\n')
        init_store(config)
        with serving(config, Path(tmp) / "serve.log") as server:
            uri = server.ready()
            home = Path(tmp) / "gravitino-home"  # the conf file the tests rewrite; nothing reads it
            (home / "conf").mkdir(parents=True)
            (home / "conf" / "gravitino.conf").write_text("")
            env = _env(
                {
                    "PUSHDOWN_GRAVITINO_URI": uri,
                    "START_EXTERNAL_GRAVITINO": "true",
                    "GRAVITINO_HOME": str(home),
                }
            )
            env.pop("GRAVITINO_USER", None)
            command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts="]
            proc = subprocess.run(  # noqa: S603 (this Python's pytest)
                [*command, "--rootdir", str(tests), *modules, *pytest_args],
                cwd=tests,
                env=env,
                capture_output=True,
                text=True,
            )
    print(proc.stdout[-6000:], proc.stderr[-2000:], sep="\n")
    passed, total = counts(proc.stdout)
    return proc.returncode, passed, total


def counts(summary: str) -> tuple[int, int]:
    """Passed and total from pytest's last line (``3 failed, 35 passed in 9.1s``)."""
    tail = summary.strip().splitlines()[-1] if summary.strip() else ""
    found = {kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed|error|errors|skipped)", tail)}
    passed = found.get("passed", 0)
    return passed, sum(found.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="a git clone of apache/gravitino with the tag")
    parser.add_argument(
        "--per-module",
        action="store_true",
        help="a fresh pushdown serve (a fresh store) for each module, as one metalake per store",
    )
    args, rest = parser.parse_known_args(argv)
    tests = fetch(args.source)
    extra = [a for a in rest if a != "--"]
    batches = [(m,) for m in MODULES] if args.per_module else [MODULES]
    status, passed, total = 0, 0, 0
    for batch in batches:
        code, ok, ran = run(tests, batch, extra)
        status, passed, total = status or code, passed + ok, total + ran
    print(f"gravitino client tests: {passed}/{total} passed")
    return status


if __name__ == "__main__":
    sys.exit(main())
