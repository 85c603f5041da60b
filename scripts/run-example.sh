#!/usr/bin/env bash
# The main job: builds bertc, generates the tiny example's data, compiles the example
# under a memory budget and trains the resulting trainer, printing the loss as it goes.
#   scripts/run-example.sh [MODEL.toml] [VRAM]     (defaults: examples/tiny/model.toml 1GB)
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-examples/tiny/model.toml}
vram=${2:-1GB}
bash scripts/build.sh
if [[ $model == examples/tiny/model.toml && ! -f examples/tiny/train.jsonl ]]; then
  python3 examples/tiny/make_data.py --rows 2048 --seed 1 --out examples/tiny/train.jsonl
fi
out=out/$(basename "$(dirname "$model")")
build/bin/bertc "$model" --vram "$vram" -o "$out"
"$out/trainer" --log "$out/metrics.jsonl" --save "$out/model.safetensors"
