#!/usr/bin/env bash
# Prints one hash of the sources a GPU bundle's binaries come from. gpu-bundle.sh records it
# in the bundle's MANIFEST; gpu-check.sh computes it in the tree it runs in (often a copy
# without .git) to warn when the bundle does not match. The exclusions are .gitignore's, so
# that both trees list the same files.
set -euo pipefail
cd "$(dirname "$0")/.."
find CMakeLists.txt compiler dialect frontends runtime test/unit/cuda examples/tiny bench/models \
  -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -path 'examples/*/train.jsonl' -print0 |
  LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
