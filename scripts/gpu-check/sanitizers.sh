# gpu-check.sh's step 4: compute-sanitizer's memcheck and racecheck on a tiny CUDA trainer.
# Sourced by scripts/gpu-check.sh, whose variables and helpers it uses.

# find_sanitizer: compute-sanitizer's path, from PATH, beside nvcc or in /usr/local/cuda.
find_sanitizer() {
  local candidate nvcc
  command -v compute-sanitizer 2>/dev/null && return 0
  nvcc=$(command -v nvcc 2>/dev/null)
  for candidate in ${nvcc:+"${nvcc%/*}/compute-sanitizer"} /usr/local/cuda/bin/compute-sanitizer \
      /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    [[ -x $candidate ]] && { echo "$candidate"; return 0; }
  done
  return 1
}

# sanitize TOOL: the tiny fp32 CUDA trainer for 2 steps under compute-sanitizer --tool TOOL,
# within the step's $deadline; records "TOOL (tiny fp32)", and sets ran=1 when the sanitizer
# ran to its end, else why_not to why it did not. Uses run_sanitizers' locals.
sanitize() {
  local tool=$1 out="$mdir/$1.out" left status errors totals tool_start last
  local name="$1 (tiny fp32)"
  tool_start=$(date +%s)
  left=$((deadline - tool_start))
  ran=0
  if ((left < 10)); then
    why_not="under 10 s left of the step's ${limit} s"
    record "$name" "NOT RUN" "$why_not"
    return 0
  fi
  # -k: a sanitizer that ignores SIGTERM; timeout signals its whole process group, so the
  # trainer under it goes too.
  timeout -k 5 $((left - 5)) "$sanitizer" --tool "$tool" --error-exitcode 1 "$trainer/trainer" \
    --data "$tiny_data" --steps 2 --seed 1 --log "$mdir/$tool.jsonl" >"$out" 2>&1
  status=$?
  # Its own lines start with "========= "; the first of an error's lines name it.
  errors=$(grep '^========= ' "$out" |
    grep -Ev 'COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|Target application returned' |
    sed 's/^=* *//' | grep -v '^$' | head -3 | paste -sd '|' | sed 's/|/ | /g')
  totals=$(grep -E '^=+ (ERROR|RACECHECK) SUMMARY' "$out" | sed 's/^=* *//' | paste -sd ';' |
    sed 's/;/; /g')
  if grep -qi 'device not supported' "$out"; then
    why_not="compute-sanitizer refuses this GPU: \
$(grep -i -m1 'device not supported' "$out" | sed 's/^=* *//')"
    record "$name" "NOT RUN" "$why_not, see $out"
  elif [[ $status -eq 124 || $status -eq 137 ]]; then
    why_not="$tool timed out"
    record "$name" "timed out" "after $(($(date +%s) - tool_start)) s (the step has ${limit} s), see $out"
  elif [[ $status -eq 0 ]]; then
    ran=1
    record "$name" ok "2 steps in $(($(date +%s) - tool_start)) s${totals:+: $totals}"
  elif [[ -n $errors && $totals != *"ERROR SUMMARY: 0 errors"* ]]; then
    ran=1
    record "$name" FAILED "${totals:-errors}: $errors, see $out"
    return 1
  else
    ran=1
    # The trainer's own lines: its first error, else its last line.
    last=$(grep -Ev '^(=+ .*|=*)$' "$out" | { grep -i -m1 'error' || tail -1; })
    record "$name" FAILED "the trainer $(outcome $status) under compute-sanitizer: $last, see $out"
    return 1
  fi
}

# Step 4: memcheck, then racecheck in what is left of the step's time.
run_sanitizers() {
  local sanitizer trainer mdir="$build_dir/gpu-check-memcheck" limit deadline ran=0 status=0
  local why_not=""
  if ! sanitizer=$(find_sanitizer); then
    record "memcheck (tiny fp32)" "NOT RUN" "no compute-sanitizer (looked in PATH, beside nvcc, \
/usr/local/cuda)"
    return 0
  fi
  trainer="$build_dir/gpu-check-compare/fp32/cuda"
  [[ -n $bundle ]] && trainer="$prebuilt/$arch/tiny-fp32"
  if [[ ! -x $trainer/trainer || -z ${tiny_data:-} ]]; then
    record "memcheck (tiny fp32)" "NOT RUN" "no tiny fp32 CUDA trainer (see tiny fp32 cpu/cuda)"
    return 0
  fi
  rm -rf "$mdir" && mkdir -p "$mdir"
  limit=$(step_limit 90)
  deadline=$(($(date +%s) + limit))
  sanitize memcheck || status=1
  if ((ran)); then
    sanitize racecheck || status=1
  else
    record "racecheck (tiny fp32)" "NOT RUN" "$why_not"
  fi
  return $status
}
