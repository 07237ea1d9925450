#!/usr/bin/env bash
# Installs what pushdown needs on a fresh machine: mariadb-server from Debian's
# packages when it is missing (needs root), the core and the built-in backend plugins.
# Usage: bash scripts/setup.sh [dev]   ("dev" adds the test and lint tools)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: mariadb-server is missing; install it (apt-get install mariadb-server) or run as root" >&2
    exit 1
  fi
  echo "setup: installing mariadb-server from Debian's packages..." >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mariadb-server >/dev/null
fi

# The Hive plugin runs a metastore from pyspark's jars and compiles its small launcher
# with javac: a JDK (17 works) must be there.
# (a JAVA_HOME counts only when it holds javac: a JRE there cannot compile the launcher)
if ! command -v javac >/dev/null 2>&1 && [ ! -x "${JAVA_HOME:-/nonexistent}/bin/javac" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: javac is missing; install a JDK (apt-get install openjdk-17-jdk-headless) or set JAVA_HOME" >&2
    exit 1
  fi
  echo "setup: installing openjdk-17-jdk-headless from Debian's packages..." >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jdk-headless >/dev/null
fi

# The page's browser tests (tests/page/, docs/ui.md) drive Debian's chromium through its
# chromedriver with Selenium (a dev dependency); Selenium is pointed at both, never downloads.
if [ "${1:-}" = "dev" ] && { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; }; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: chromium is missing; install it (apt-get install chromium chromium-driver)" >&2
    exit 1
  fi
  echo "setup: installing chromium and chromium-driver from Debian's packages..." >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
fi

extra=""
[ "${1:-}" = "dev" ] && extra="[dev]"
pip_install() { python -m pip install -q --disable-pip-version-check "$@"; }
pip_install -e ".${extra}"
for plugin in plugins/*/; do
  if [ -f "$plugin/pyproject.toml" ]; then pip_install -e "$plugin"; fi
done

# The lab's Java judges (Ranger's own policy engine, ...) come from Maven Central: fetched
# once per machine into Maven's local repository, so the tests find them there.
if [ "${1:-}" = "dev" ]; then
  if command -v mvn >/dev/null 2>&1; then
    python -m pushdown_lab.maven
  else
    echo "setup: mvn is missing; the Ranger judge needs Maven 3 (apt-get install maven)" >&2
  fi
fi
