#!/usr/bin/env bash
# Configures and builds bertc into build/ (installing missing Debian packages first).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBERTC_WARNINGS_AS_ERRORS=ON >/dev/null
cmake --build build -j "$jobs"
