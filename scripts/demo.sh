#!/usr/bin/env bash
# The main job on the embedded defaults: apply examples/demo.yaml to a throwaway
# MariaDB and show who can do what, read back from the server; then the same on a
# throwaway Hive Metastore (pushdown demo-hive) and a Ranger Admin stand-in (demo-ranger).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2
pushdown demo examples/demo.yaml
pushdown demo-hive examples/demo.yaml
pushdown demo-ranger examples/demo.yaml  # the same example, pushed to a Ranger Admin stand-in
pushdown demo-unitycatalog examples/demo.yaml  # and to a Unity Catalog stand-in, asked as each user
