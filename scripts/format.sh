#!/usr/bin/env bash
# Formats bertc's C++ and CUDA sources with clang-format 19 and .clang-format.
#   scripts/format.sh           # rewrites the files that differ
#   scripts/format.sh --check   # lists them and fails instead (scripts/test.sh runs this)
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=clang-format-19
command -v "$clang_format" >/dev/null || { echo "format: $clang_format is missing (scripts/setup.sh installs it)" >&2; exit 1; }

# The C++ and CUDA sources of the tree, tracked or new (generated tables are .inc files and
# stay as written).
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.h' '*.cu' '*.cuh' |
  while read -r file; do [[ -f $file ]] && echo "$file"; done)
if [[ ${1:-} != --check ]]; then
  "$clang_format" -i "${files[@]}"
  exit
fi
unformatted=()
for file in "${files[@]}"; do
  "$clang_format" --dry-run -Werror "$file" >/dev/null 2>&1 || unformatted+=("$file")
done
if ((${#unformatted[@]})); then
  printf 'format: not as .clang-format says (run scripts/format.sh):\n' >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "format: ${#files[@]} files as .clang-format says"
