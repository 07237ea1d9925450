#!/usr/bin/env bash
# The test command: installs what the tests need, then runs lint, type checks,
# the import contract and the whole test suite (real MariaDB included).
# Exit status: 0 all green; non-zero on any failure, including "no tests ran".
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need_apt+=(mariadb-server)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "scripts/test.sh: please install: ${need_apt[*]} (apt-get install ${need_apt[*]})" >&2
    exit 1
  fi
  echo "installing ${need_apt[*]} from Debian's packages..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

python -m pip install -q --disable-pip-version-check -e '.[dev]'
for plugin in plugins/*/; do
  [ -f "$plugin/pyproject.toml" ] && python -m pip install -q --disable-pip-version-check -e "$plugin"
done

echo "== ruff";          python -m ruff check .
echo "== mypy (strict)"; python -m mypy
echo "== import contract"; lint-imports
echo "== pytest"
set +e
python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "scripts/test.sh: pytest collected no tests; that is a failure" >&2
  exit 1
fi
exit "$status"
