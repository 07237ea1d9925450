#!/usr/bin/env bash
# The test command: installs what the tests need (scripts/setup.sh dev), then runs
# ruff, mypy (strict on the core), the import contract and the whole test suite,
# real MariaDB included. Exit status is non-zero on any failure, "no tests ran" too.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev

echo "== ruff";            python -m ruff check .
echo "== mypy (strict)";   python -m mypy
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
