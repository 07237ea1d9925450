"""The open Unity Catalog server's classpath, fetched by Maven once per machine.

``fetch_classpath(version)`` writes a small pom naming ``io.unitycatalog:unitycatalog-server``
and runs ``mvn dependency:copy-dependencies`` into ``~/.cache/pushdown/maven/<key>``
under a file lock (one fetch per machine, whoever asks first). On these machines the
Maven registry does not serve ``io.unitycatalog`` (every version from 0.1.0 to 0.7.0 was
refused): :class:`UnityCatalogUnavailable` says so, and the tests run against the
stand-in (:mod:`pushdown_lab.uc_standin`).

What the server needs, read from its source (unitycatalog/unitycatalog 0.4.1), for the
day it is served: main class ``io.unitycatalog.server.UnityCatalogServer`` with ``-p
PORT`` (the REST server on PORT+1, a URL transcoder on PORT); a working directory with
``etc/conf/server.properties`` (``server.authorization=enable``) and no
``hibernate.properties`` (then an in-memory H2); it writes ``etc/conf/token.txt`` (the
admin token) and its RSA key (``private_key.der``, ``key_id.txt``) that signs the tokens
of users created through SCIM. Armeria binds both ports on every interface: a
throwaway server here needs a network namespace or a firewall rule to stay on loopback.
"""

from __future__ import annotations

import fcntl
import hashlib
import subprocess
from pathlib import Path

GROUP, ARTIFACT, VERSION = "io.unitycatalog", "unitycatalog-server", "0.4.1"
MAIN = "io.unitycatalog.server.UnityCatalogServer"

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>pushdown.lab</groupId><artifactId>uc-classpath</artifactId><version>1</version>
  <dependencies><dependency>
    <groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version>
  </dependency></dependencies>
</project>
"""


class UnityCatalogUnavailable(Exception):
    """The server's jars could not be had; the message says why."""


def cache_dir(version: str = VERSION) -> Path:
    key = hashlib.sha256(f"{GROUP}:{ARTIFACT}:{version}".encode()).hexdigest()[:12]
    return Path.home() / ".cache" / "pushdown" / "maven" / key


def fetch_classpath(version: str = VERSION, *, timeout: float = 900.0) -> list[Path]:
    """The server's jars (fetched on first use, under a lock); raises
    :class:`UnityCatalogUnavailable` when Maven cannot resolve them."""
    where = cache_dir(version)
    where.mkdir(parents=True, exist_ok=True)
    with open(where / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = where / "complete"
        if not done.exists():
            _fetch(where, version, timeout)
            done.write_text(version)
    return sorted((where / "jars").glob("*.jar"))


def _fetch(where: Path, version: str, timeout: float) -> None:
    (where / "pom.xml").write_text(POM.format(group=GROUP, artifact=ARTIFACT, version=version))
    command = ["mvn", "-q", "-B", "-f", str(where / "pom.xml"), "dependency:copy-dependencies",
               f"-DoutputDirectory={where / 'jars'}"]  # fmt: skip
    try:
        run = subprocess.run(  # noqa: S603 - fixed arguments, no shell
            command, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UnityCatalogUnavailable(f"Maven did not run: {exc}") from exc
    if run.returncode != 0:
        tail = (run.stdout + run.stderr).strip().splitlines()[-3:]
        raise UnityCatalogUnavailable(
            f"Maven could not resolve {GROUP}:{ARTIFACT}:{version} (the registry here does not serve it): "
            + " / ".join(tail)
        )
