# gpu-check.sh's step 3: the tiny example's CUDA trainers against the CPU's, step by step,
# and each CUDA trainer's device peak against its plan.
# Sourced by scripts/gpu-check.sh, whose variables and helpers it uses.

# run_tiny TRAINER_DIR NAME: the tiny example's trainer in TRAINER_DIR, 20 steps from seed 1,
# its log in $dir/NAME.jsonl and its output in $dir/NAME.out and .err. Uses train_both's locals.
run_tiny() {
  local status
  within "$1/trainer" --data "$data" --steps 20 --seed 1 --log "$dir/$2.jsonl" \
    >"$dir/$2.out" 2>"$dir/$2.err"
  status=$?
  if [[ $status -ne 0 ]]; then
    record "$name" FAILED "$2 trainer $(outcome $status): $(tail -1 "$dir/$2.err")"
    return 1
  fi
}

# compare_field FIELD RTOL [last]: CUDA's per-step FIELD against the CPU's (compare_logs.py),
# every step, or with "last" the last step's only; appends what it found to $found. Uses
# train_both's locals.
compare_field() {
  local field=$1 rtol=$2 ours="$dir/cuda.jsonl" reference=$cpu_log out status largest
  out="$dir/compare-$field.txt"
  if [[ ${3:-} == last ]]; then
    ours="$dir/cuda-last.jsonl" reference="$dir/cpu-last.jsonl"
    tail -n 1 "$dir/cuda.jsonl" >"$ours" && tail -n 1 "$cpu_log" >"$reference"
  fi
  within python3 test/reference/compare_logs.py "$ours" "$reference" --field "$field" \
    --rtol "$rtol" >"$out" 2>&1
  status=$?
  # The largest of the "rel. diff" column (step, ours, reference, rel. diff rows).
  largest=$(awk 'NF == 4 && $1 ~ /^[0-9]+$/ && $4 + 0 > m { m = $4 + 0 } END { printf "%.3g", m }' \
    "$out")
  if [[ $status -ne 0 ]]; then
    [[ $status -eq 124 ]] && echo "timed out" >>"$out"
    record "$name" FAILED "$field differs: $(tail -1 "$out") (largest rel. diff $largest, \
rtol $rtol), see $out"
    return 1
  fi
  if [[ ${3:-} == last ]]; then
    found+="$field $(awk 'NF == 4 && $1 ~ /^[0-9]+$/ { print $2 " at step " $1 }' "$out") as \
on the CPU; "
  else
    found+="$field largest rel. diff $largest (rtol $rtol); "
  fi
}

# train_both VARIANT RTOL [FIELD:RTOL | last:FIELD]...: the tiny example, 20 steps on each
# target from seed 1, CUDA's losses against the CPU's at RTOL, then each further FIELD at its
# RTOL every step, or exactly at the last step, then the CUDA trainer's device peak against
# plan.json. VARIANT is fp32, bf16, fp16 (a precision), clip (fp32 with $clip_model), 8bit
# (fp32 with --optimizer-state 8bit), tf32 (fp32, the CUDA trainer with --tf32) or offload
# (bf16, the CUDA trainer with --offload-optimizer on). From a
# bundle, the CUDA trainer and the CPU's log come prebuilt; else bertc builds both. Uses
# compare_trainer_targets' $work, $data, $deadline, $log and $clip_model.
train_both() {
  local variant=$1 rtol=$2 dir="$work/$1" target status peak flags cuda cpu_log check cuda_flags=()
  local name="tiny $1 cpu/cuda" model=examples/tiny/model.toml precision=$1 found="" state=fp32
  shift 2
  [[ $variant == clip ]] && name="tiny clip fp32 cpu/cuda" model=$clip_model precision=fp32
  [[ $variant == 8bit ]] && name="tiny 8-bit AdamW fp32 cpu/cuda" precision=fp32 state=8bit
  [[ $variant == tf32 ]] && name="tiny fp32 cpu/TF32 cuda" precision=fp32 cuda_flags=(--tf32)
  [[ $variant == offload ]] && name="tiny bf16 cpu/cuda, optimizer on the host" precision=bf16 \
    cuda_flags=(--offload-optimizer on --host-ram 1GB)
  [[ $variant == checkpoints ]] && name="tiny bf16 cpu/cuda, checkpoints in host memory" \
    precision=bf16 cuda_flags=(--offload-checkpoints on --host-ram 1GB)
  mkdir -p "$dir"
  if [[ -n $bundle ]]; then
    cuda="$prebuilt/$arch/tiny-$variant"
    cpu_log="$prebuilt/tiny/cpu-$variant.jsonl"
    if [[ ! -x $cuda/trainer || ! -f $cpu_log ]]; then
      # Bundles from before the "tiny:" line held fp32 and bf16.
      record "$name" "NOT RUN" "the bundle has no tiny-$variant trainer or cpu-$variant.jsonl \
(it has tiny: $(manifest_field tiny | grep . || echo fp32 bf16)): rerun scripts/gpu-bundle.sh"
      return 0
    fi
  else
    for target in cpu cuda; do
      flags=(--target "$target")
      [[ $target == cuda ]] && flags+=(--arch "$arch" "${cuda_flags[@]}")
      within "$bertc" "$model" --vram 1GB --precision "$precision" --optimizer-state "$state" \
        "${flags[@]}" -o "$dir/$target" >>"$log" 2>&1
      status=$?
      if [[ $status -ne 0 ]]; then
        record "$name" FAILED "bertc --target $target $(outcome $status), see $log"
        return 1
      fi
    done
    run_tiny "$dir/cpu" cpu || return 1
    cuda="$dir/cuda" cpu_log="$dir/cpu.jsonl"
  fi
  run_tiny "$cuda" cuda || return 1
  compare_field loss "$rtol" || return 1
  for check in "$@"; do
    if [[ $check == last:* ]]; then
      compare_field "${check#last:}" 0 last || return 1
    else
      compare_field "${check%:*}" "${check#*:}" || return 1
    fi
  done
  peak=$(python3 test/cuda/Inputs/peak_within_plan.py "$dir/cuda.out" "$cuda/plan.json" 2>&1)
  status=$?
  if [[ $status -ne 0 ]]; then
    record "$name" FAILED "the logs match (${found%; }), but $peak"
    return 1
  fi
  record "$name" ok "${found}$peak"
}

# Step 3. Sets tiny_data, the data the memcheck step trains on.
compare_trainer_targets() {
  local deadline work="$build_dir/gpu-check-compare" log data status=0 clip_model
  deadline=$(($(date +%s) + $(step_limit 90)))
  log="$work/build.log"
  data="$work/train.jsonl"
  clip_model="$work/clip.toml"
  rm -rf "$work" && mkdir -p "$work"
  if [[ -n $bundle ]]; then
    data="$prebuilt/tiny/train.jsonl"
  elif ! within python3 examples/tiny/make_data.py --rows 2048 --seed 1 \
      --out "$data" >"$log" 2>&1; then
    record "tiny cpu/cuda" FAILED "make_data.py failed, see $log"
    return 1
  fi
  tiny_data=$data
  # As test/e2e/grad-clipping.test makes it (and gpu-bundle.sh): the tiny example's gradient
  # norm runs 0.03 to 0.4, so 0.05 clips most steps.
  sed 's/^warmup = 0.1$/warmup = 0.1\nmax_grad_norm = 0.05/' examples/tiny/model.toml >"$clip_model"
  train_both fp32 1e-3 || status=1
  train_both bf16 2e-2 || status=1
  train_both fp16 2e-2 last:loss_scale last:skipped_steps || status=1
  if [[ -z $bundle ]] && ! grep -q '^max_grad_norm = 0.05$' "$clip_model"; then
    record "tiny clip fp32 cpu/cuda" FAILED "no 'warmup = 0.1' line in examples/tiny/model.toml \
to add max_grad_norm after"
    status=1
  else
    train_both clip 1e-3 grad_norm:1e-3 || status=1
  fi
  train_both 8bit 1e-3 || status=1
  if [[ ${arch#sm_} -ge 80 ]]; then
    train_both tf32 2e-3 || status=1
  else
    record "tiny fp32 cpu/TF32 cuda" "NOT RUN" "TF32 needs sm_80 or newer; this GPU is $arch"
  fi
  train_both offload 2e-2 || status=1
  train_both checkpoints 2e-2 || status=1
  return $status
}
