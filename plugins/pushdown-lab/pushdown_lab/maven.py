"""Java artifacts from Maven Central, fetched once per machine by Maven itself.

The versions every judge and server of the lab runs are pinned here, and nowhere else::

    jars = classpath(RANGER_ENGINE)        # [Path, ...]: the artifact and its dependencies

The first call writes a small pom naming the coordinates into the cache
(``~/.cache/pushdown/maven/<key>/``), asks Maven for ``dependency:build-classpath`` (the jars
land in Maven's own local repository, ``~/.m2`` unless ``PUSHDOWN_MAVEN_REPO`` names
another) and keeps the answer; later calls read it back. A file lock serialises
concurrent test processes, so two never resolve the same set at once. ``scripts/setup.sh``
calls :func:`prefetch` so a fresh machine has everything before the tests run.

What Maven Central held when this was written (``mvn dependency:get``):
``org.apache.ranger:ranger-plugins-common:2.9.0`` (the policy engine, 61 jars with its
dependencies, 74 MB); ``org.apache.ranger:authz-embedded`` is not published (2.7.0, 2.8.0 and
2.9.0 all fail to resolve); ``org.apache.hive:hive-standalone-metastore-server`` 4.0.0 and 4.0.1
(not 4.1.0: that release publishes the parent pom and the common jar only).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from xml.sax.saxutils import escape

__all__ = ["RANGER_ENGINE", "MavenUnavailable", "cache_dir", "classpath", "prefetch"]

#: Ranger's policy engine (RangerPolicyEngineImpl) and everything it loads
RANGER_ENGINE = (
    "org.apache.ranger:ranger-plugins-common:2.9.0",
    # policy conditions are JavaScript; Ranger's pom says to add GraalJS on JDK 15 and above
    "org.graalvm.js:js:22.3.0",
    "org.graalvm.js:js-scriptengine:22.3.0",
)

#: Hive Metastore 4 standalone: 4.0.1 is the newest server on Central (4.1.0 publishes no
#: ``hive-standalone-metastore-server``); it runs on JDK 17 with Hadoop's shaded 3.3 client in
#: place of the Hadoop 2.6 jars its pom drags in. ``-group:artifact`` excludes a dependency.
HIVE4_METASTORE = (
    "org.apache.hive:hive-standalone-metastore-server:4.0.1 -jdk.tools:jdk.tools"
    " -org.apache.hadoop:hadoop-common -org.apache.hadoop:hadoop-auth -org.slf4j:slf4j-log4j12 -log4j:log4j",
    "org.apache.hadoop:hadoop-client-api:3.3.6",
    "org.apache.hadoop:hadoop-client-runtime:3.3.6",
    "org.apache.hadoop:hadoop-hdfs:3.3.6 -*:*",  # HMSHandler loads its SnapshotException; alone
    "commons-cli:commons-cli:1.5.0",
)

#: what ``scripts/setup.sh`` fetches ahead of the tests
PINNED = (RANGER_ENGINE, HIVE4_METASTORE)


class MavenUnavailable(RuntimeError):
    """Maven is missing or could not resolve the artifacts; the message says which and why."""


def cache_dir() -> Path:
    base = os.environ.get("PUSHDOWN_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pushdown"
    )
    return Path(base)


def pom(coordinates: Sequence[str]) -> str:
    """A pom depending on each ``group:artifact:version`` (followed by ``-group:artifact``
    for each dependency of it to leave out), and nothing else."""
    deps = []
    for coordinate in coordinates:
        main, *excluded = coordinate.split()
        group, artifact, version = main.split(":")
        exclusions = "".join(
            f"<exclusion><groupId>{escape(g)}</groupId><artifactId>{escape(a)}</artifactId></exclusion>"
            for g, a in (e.lstrip("-").split(":") for e in excluded)
        )
        deps.append(
            f"    <dependency><groupId>{escape(group)}</groupId><artifactId>{escape(artifact)}</artifactId>"
            f"<version>{escape(version)}</version>"
            f"{f'<exclusions>{exclusions}</exclusions>' if exclusions else ''}</dependency>\n"
        )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "  <modelVersion>4.0.0</modelVersion>\n"
        "  <groupId>pushdown.lab</groupId><artifactId>fetch</artifactId><version>1</version>"
        "<packaging>pom</packaging>\n"
        f"  <dependencies>\n{''.join(deps)}  </dependencies>\n</project>\n"
    )


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _read(listing: Path) -> list[Path] | None:
    if not listing.is_file():
        return None
    jars = [Path(p) for p in listing.read_text(encoding="utf-8").strip().split(os.pathsep) if p]
    return jars if jars and all(j.is_file() for j in jars) else None


def classpath(coordinates: Sequence[str]) -> list[Path]:
    """The jars of ``coordinates`` and their runtime dependencies, resolved on first use."""
    text = pom(coordinates)
    work = cache_dir() / "maven" / hashlib.sha256(text.encode()).hexdigest()[:16]
    listing = work / "classpath.txt"
    found = _read(listing)
    if found is not None:
        return found
    with _locked(work.with_suffix(".lock")):
        found = _read(listing)  # another process may have resolved it while we waited
        if found is None:
            _resolve(work, text, listing)
            found = _read(listing)
    if found is None:
        raise MavenUnavailable(f"Maven left no usable classpath for {', '.join(coordinates)} in {work}")
    return found


def _resolve(work: Path, text: str, listing: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise MavenUnavailable("mvn not found: install Maven 3 (apt-get install maven)")
    work.mkdir(parents=True, exist_ok=True)
    (work / "pom.xml").write_text(text, encoding="utf-8")
    command = [mvn, "-q", "-B", "dependency:build-classpath", f"-Dmdep.outputFile={listing.name}.part"]
    repo = os.environ.get("PUSHDOWN_MAVEN_REPO")
    if repo:
        command.append(f"-Dmaven.repo.local={repo}")
    done = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False)  # noqa: S603
    if done.returncode != 0:
        raise MavenUnavailable(
            f"Maven could not resolve the classpath:\n{(done.stdout + done.stderr)[-3000:]}"
        )
    (work / f"{listing.name}.part").rename(listing)


def prefetch() -> None:
    """Fetch every pinned set (``python -m pushdown_lab.maven``, run by ``scripts/setup.sh``)."""
    for coordinates in PINNED:
        jars = classpath(coordinates)
        print(f"{', '.join(coordinates)}: {len(jars)} jars")


if __name__ == "__main__":
    prefetch()
