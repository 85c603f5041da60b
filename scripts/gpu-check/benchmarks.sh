# gpu-check.sh's steps 5 to 8: BERT-base's and Llama-3.2-1B's steps against PyTorch, attention
# against SDPA, and each op's time against the plan's estimate.
# Sourced by scripts/gpu-check.sh, whose variables and helpers it uses.

# record_bench_failure STEP STATUS LIMIT LOG: STEP FAILED, with the bench's last line.
record_bench_failure() {
  local last
  last=$(grep -v '^$' "$4" | tail -1)
  record "$1" FAILED "$(outcome "$2") (limit $3 s)${last:+: $last}"
}

# summarize_lines PATTERN LOG: LOG's lines that match PATTERN, indented under the summary's
# last line.
summarize_lines() {
  local line
  while IFS= read -r line; do
    summary+=("    $line")
  done < <(grep -E "$1" "$2")
}

# record_peak_table NAME START LOG PATTERN: the result of a bench whose table's last column,
# "peak <= plan", says NO where the device held more than planned, then LOG's lines that
# match PATTERN (its header and table); fails when a row says NO.
record_peak_table() {
  local over
  over=$(grep -Ec '\| +NO \|$' "$3")
  if ((over > 0)); then
    record "$1" FAILED "device peak above the plan in $over row(s); table below"
  else
    record "$1" ok "$(($(date +%s) - $2)) s; table below"
  fi
  summarize_lines "$4" "$3"
  ((over == 0))
}

measure_bert_base() {
  local step_start log="$build_dir/gpu-check-bert-base.txt" status limit
  local trainers=(--arch "$arch" --both-attentions)
  [[ -n $bundle ]] && trainers=(--prebuilt "$prebuilt/$arch/bert-base")
  step_start=$(date +%s)
  limit=$(step_limit 150)
  BERTC="$bertc" PYTHONUNBUFFERED=1 timeout "$limit" python3 bench/cuda_step.py "${trainers[@]}" \
    >"$log" 2>&1
  status=$?
  cat "$log"
  if [[ $status -ne 0 ]]; then
    record_bench_failure "bert-base throughput" "$status" "$limit" "$log"
    return 1
  fi
  # The bench's header, PyTorch lines and table.
  record_peak_table "bert-base throughput" "$step_start" "$log" '^(\||CUDA trainer|PyTorch)'
}

# Step 6: Llama-3.2-1B's shape from random weights, 20 steps on the CUDA trainer and in PyTorch
# eager + SDPA: step time, tokens/s and device peak against the plan. A partial run measures
# nothing, so it does not start with under 60 s left; the bench's exit status 3 says the GPU
# holds less than the plan's peak (NOT RUN).
measure_causal_lm() {
  local step_start log="$build_dir/gpu-check-causal-lm.txt" status limit
  local name="Llama-3.2-1B vs PyTorch"
  local trainer=(--arch "$arch") dir="$prebuilt/$arch/llama-3.2-1b"
  if [[ -n $bundle && ! -f $dir/manifest.json ]]; then
    record "$name" "NOT RUN" "the bundle has no $arch/llama-3.2-1b: rerun scripts/gpu-bundle.sh"
    return 0
  fi
  [[ -n $bundle ]] && trainer=(--prebuilt "$dir")
  limit=$(step_limit 90)
  if ((limit < 60)); then
    record "$name" "NOT RUN" "only $limit s left of the run's $total_limit s (it needs 60)"
    return 0
  fi
  step_start=$(date +%s)
  BERTC="$bertc" PYTHONUNBUFFERED=1 timeout "$limit" python3 bench/causal_lm_step.py \
    "${trainer[@]}" >"$log" 2>&1
  status=$?
  cat "$log"
  if [[ $status -eq 3 ]]; then
    record "$name" "NOT RUN" "$(grep -v '^$' "$log" | tail -1)"
    return 0
  fi
  if [[ $status -ne 0 ]]; then
    record_bench_failure "$name" "$status" "$limit" "$log"
    # What the trainer measured before PyTorch failed (the table) or the time ran out.
    summarize_lines '^(bertc:|\||Causal-LM)' "$log"
    return 1
  fi
  # The bench's header, PyTorch line and table.
  record_peak_table "$name" "$step_start" "$log" '^(\||Causal-LM|PyTorch)'
}

# Step 7: bertc's attention kernels against PyTorch's SDPA at BERT-base's shapes, in the
# precision the trainers use (cuBLASLt's bf16 GEMMs need sm_80).
measure_attention() {
  local step_start log="$build_dir/gpu-check-attention.txt" status limit
  local program="$build_dir/bin/bertc_attention_time" precision=bf16
  [[ -n $bundle ]] && program="$prebuilt/bin/bertc_attention_time"
  [[ ${arch#sm_} -lt 80 ]] && precision=fp16
  if [[ ! -x $program ]]; then
    record "attention vs SDPA" "NOT RUN" "no $program${bundle:+ (rerun scripts/gpu-bundle.sh)}"
    return 0
  fi
  step_start=$(date +%s)
  limit=$(step_limit 60)
  PYTHONUNBUFFERED=1 timeout "$limit" python3 bench/attention_vs_sdpa.py --program "$program" \
    --batch 32 --seqs 128 512 --precision "$precision" >"$log" 2>&1
  status=$?
  cat "$log"
  if [[ $status -ne 0 ]]; then
    record_bench_failure "attention vs SDPA" "$status" "$limit" "$log"
    return 1
  fi
  record "attention vs SDPA" ok "$precision, $(($(date +%s) - step_start)) s; table below"
  # The bench's header, PyTorch line, table and fused product rates.
  summarize_lines '^(\||Attention on|Attention products|PyTorch|fused products at)' "$log"
}

# Step 8: BERT-base's measured op times beside the plan's estimate, at seq 128 and 512.
measure_op_times() {
  local deadline seq log status dir step limit args status_all=0
  limit=$(step_limit 60)
  deadline=$(($(date +%s) + limit))
  for seq in 128 512; do
    log="$build_dir/gpu-check-op-times-seq$seq.txt"
    if [[ -n $bundle ]]; then
      dir="$prebuilt/$arch/op-times/seq$seq"
      if [[ ! -f $dir/manifest.json ]]; then
        record "op times seq $seq" "NOT RUN" "the bundle has no $arch/op-times/seq$seq: rerun \
scripts/gpu-bundle.sh"
        continue
      fi
      args=(--prebuilt "$dir")
    else
      args=(--model bert-base --target cuda --arch "$arch" --seq "$seq" --batch 32)
    fi
    BERTC="$bertc" PYTHONUNBUFFERED=1 within python3 bench/op_times.py "${args[@]}" >"$log" 2>&1
    status=$?
    cat "$log"
    if [[ $status -ne 0 ]]; then
      record_bench_failure "op times seq $seq" "$status" "$limit" "$log"
      status_all=1
      continue
    fi
    # The table's last row: | **step** | | measured | estimated | measured / estimated |
    step=$(awk -F'|' '$2 ~ /\*\*step\*\*/ { gsub(/ /, ""); print $4 " s measured, " $5 \
" s estimated (" $6 "x)" }' "$log")
    record "op times seq $seq" ok "batch 32, a step: ${step:-no step row}; table in $log"
  done
  return $status_all
}
