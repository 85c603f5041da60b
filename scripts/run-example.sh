#!/usr/bin/env bash
# The main job: builds bertc, generates the tiny example's data, compiles the example
# under a memory budget and trains the resulting trainer, printing the loss as it goes.
# The trainer is the CUDA target's where a GPU is present (nvidia-smi lists one), else the
# CPU target's.
#   scripts/run-example.sh [MODEL.toml] [VRAM]     (defaults: examples/tiny/model.toml 1GB;
#   examples/tiny-llama/model.toml and examples/tiny-gpt2/model.toml generate their
#   folder and data too; examples/tiny-llama-qlora/model.toml first trains the tiny Llama
#   it adapts)
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-examples/tiny/model.toml}
vram=${2:-1GB}
bash scripts/build.sh
if [[ $model == examples/tiny/model.toml && ! -f examples/tiny/train.jsonl ]]; then
  python3 examples/tiny/make_data.py --rows 2048 --seed 1 --out examples/tiny/train.jsonl
fi
# The tiny decoders' folders (config.json) and data.
for decoder in tiny-llama tiny-gpt2; do
  if [[ $model == examples/$decoder/model.toml && ! -f examples/$decoder/train.jsonl ]]; then
    python3 "examples/$decoder/make_data.py"
  fi
done
# The QLoRA example's base: the tiny Llama example trained and saved as a Hugging Face folder.
if [[ $model == examples/tiny-llama-qlora/model.toml && ! -d examples/tiny-llama-qlora/base ]]; then
  [[ -f examples/tiny-llama/train.jsonl ]] || python3 examples/tiny-llama/make_data.py
  build/bin/bertc examples/tiny-llama/model.toml --vram 1GB --target cpu -o out/tiny-llama
  out/tiny-llama/trainer --save examples/tiny-llama-qlora/base --quiet
fi
if [[ $model == examples/tiny-llama-qlora/model.toml && ! -f examples/tiny-llama-qlora/train.jsonl ]]; then
  python3 examples/tiny-llama-qlora/make_data.py
fi
out=out/$(basename "$(dirname "$model")")
target=cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  target=cuda
fi
build/bin/bertc "$model" --vram "$vram" --target "$target" -o "$out"
"$out/trainer" --log "$out/metrics.jsonl" --save "$out/model.safetensors"
