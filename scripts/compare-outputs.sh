#!/usr/bin/env bash
# Compares what two bertc binaries produce for the same jobs: the CPU trainer's source
# (-emit=cpp), the CUDA trainer's (-emit=cuda), and plan.json, memory.html and the summary
# (-emit=plan), for the examples, the bench models and the end-to-end tests' jobs, under
# several budgets, targets and optimizer flags. A refactoring that claims no change in
# behaviour shows it here: every output byte-identical.
#   scripts/compare-outputs.sh OLD_BERTC NEW_BERTC [WORK_DIR]
# Exit status 1 when any output differs (each difference is listed), 0 when none does.
set -uo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "$1")
new=$(realpath "$2")
work=${3:-$(mktemp -d)}
mkdir -p "$work"

jobs=(examples/*/model.toml bench/models/*.toml test/e2e/Inputs/*.toml)
# Each variant: a name and the flags it adds.
variants=(
  "cpu-1GB|-emit=cpp --vram 1GB"
  "cpu-16GB|-emit=cpp --vram 16GB"
  "cpu-8bit|-emit=cpp --vram 16GB --optimizer-state 8bit --fuse-optimizer on"
  "cuda80-6GB|-emit=cuda --target cuda --arch sm_80 --vram 6GB"
  "cuda75-4GB|-emit=cuda --target cuda --arch sm_75 --vram 4GB --offload-optimizer on --host-ram 64GB"
  "cuda90-16GB|-emit=cuda --target cuda --arch sm_90 --vram 16GB --precision bf16"
  "plan80-5GB|-emit=plan --target cuda --arch sm_80 --vram 5GB --explain"
  "plan75-2GB|-emit=plan --target cuda --arch sm_75 --vram 2GB --remat none --precision fp16"
)

# Each job is copied into WORK_DIR/jobs with its `from` folder's config.json (an example's
# generated one from its make_data.py --config-only); where that folder is not there, the
# copy gets one: BERT-base-cased's for the examples, the frontend tests' tiny one for the rest.
stage_job() { # JOB -> the copy's path
  local job=$1 dir
  dir="$work/jobs/$(echo "${job%.toml}" | tr '/' '_')"
  mkdir -p "$dir"
  cp "$job" "$dir/model.toml"
  local from
  from=$(sed -n 's/^from *= *"\([^"]*\)".*/\1/p' "$job" | head -1)
  if [[ -n $from && -f $(dirname "$job")/$from/config.json ]]; then
    mkdir -p "$dir/$from"
    cp "$(dirname "$job")/$from/config.json" "$dir/$from/config.json"
  elif [[ -n $from ]] && grep -q -- --config-only "$(dirname "$job")/make_data.py" 2>/dev/null; then
    python3 "$(dirname "$job")/make_data.py" --config-only --out "$dir" # a generated folder
  elif [[ -n $from && ! -d $dir/$from ]]; then
    mkdir -p "$dir/$from"
    if [[ $from == bert-base-cased ]]; then
      printf '%s\n' '{"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12,' \
        '"num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 28996,' \
        '"max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12}' \
        >"$dir/$from/config.json"
    else
      cp test/Frontend/Inputs/tiny-hf/config.json "$dir/$from/config.json"
    fi
  fi
  echo "$dir/model.toml"
}

run() { # BINARY JOB FLAGS OUTDIR
  local binary=$1 job=$2 flags=$3 out=$4
  mkdir -p "$out"
  # shellcheck disable=SC2086
  (cd "$out" && "$binary" "$job" $flags -o plan >stdout 2>stderr; echo "exit $?" >>stdout)
  # The output folder's absolute path appears in the summary; make it the same for both.
  sed -i "s|$out|OUT|g" "$out/stdout" "$out/stderr"
}

differences=0
for original in "${jobs[@]}"; do
  job=$(stage_job "$original")
  for variant in "${variants[@]}"; do
    name=${variant%%|*}
    flags=${variant#*|}
    tag=$(echo "${original%.toml}" | tr '/' '_')-$name
    run "$old" "$job" "$flags" "$work/old/$tag"
    run "$new" "$job" "$flags" "$work/new/$tag"
    if ! diff -r -q "$work/old/$tag" "$work/new/$tag" >/dev/null; then
      echo "differs: $original [$name]"
      diff -r -q "$work/old/$tag" "$work/new/$tag" | sed 's/^/    /'
      differences=$((differences + 1))
    fi
  done
done
count=$((${#jobs[@]} * ${#variants[@]}))
echo "compare-outputs: $((count - differences)) of $count job x variant outputs identical ($work)"
[[ $differences == 0 ]]
