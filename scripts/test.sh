#!/usr/bin/env bash
# The whole test suite: builds bertc, then runs the GoogleTest units and the lit suites
# (dialect, frontend, passes, codegen, end-to-end training) through ctest, then every fuzz
# target for 10 s (scripts/fuzz.sh; any crash, sanitizer report or timeout fails).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$jobs"
bash scripts/fuzz.sh --seconds 10
