#!/usr/bin/env bash
# The whole test suite: builds bertc, then runs the GoogleTest units and the lit suites
# (dialect, frontend, passes, codegen, end-to-end training) through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc 2>/dev/null || echo 2)"
