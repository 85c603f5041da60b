#!/usr/bin/env bash
# The whole test suite: checks the sources' format (scripts/format.sh), builds bertc, runs
# the GoogleTest units and the lit suites (dialect, frontend, passes, codegen, end-to-end
# training) through ctest, then every fuzz target for 10 s (scripts/fuzz.sh; any crash,
# sanitizer report or timeout fails).
#   scripts/test.sh              # what CI runs
#   scripts/test.sh --sanitize   # the suite built with ASan and UBSan in build-sanitize/,
#                                # the trainers it builds too (not part of CI: ~1 hour)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

if [[ ${1:-} == --sanitize ]]; then
  bash scripts/setup.sh
  # Without CUDA: nvcc's device code is beyond ASan, and the build stays within the hour.
  cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Release -DBERTC_ENABLE_CUDA=OFF \
    -DCMAKE_PROJECT_INCLUDE="$PWD/scripts/sanitize.cmake" >/dev/null
  cmake --build build-sanitize -j "$jobs"
  # The trainers link the sanitized runtime, so they are built with the same sanitizers.
  export BERTC_TRAINER_CXXFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined \
-fno-omit-frame-pointer"
  # An error aborts, so that a test expecting a failure (`not ...`) fails on it too.
  # allocator_may_return_null: a trainer reports an arena it cannot allocate (exit 3).
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
  export UBSAN_OPTIONS=print_stacktrace=1:abort_on_error=1
  ctest --test-dir build-sanitize --output-on-failure -j "$jobs"
  exit
fi

bash scripts/setup.sh
bash scripts/format.sh --check
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$jobs"
bash scripts/fuzz.sh --seconds 10
