#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/) under ASan and UBSan and runs them; fails on any crash,
# sanitizer report, leak or input that times out.
#   scripts/fuzz.sh --hours 2          # long runs: the time shared among the targets
#   scripts/fuzz.sh --seconds 20       # each target for 20 s (what scripts/test.sh runs)
#   scripts/fuzz.sh --runs 100000 toml_job squad    # a number of inputs, some targets
# With clang the targets are libFuzzer binaries, else the mutation driver's (fuzz/README.md).
# Long runs keep what they find in build-fuzzers/corpus/TARGET (seeded from
# fuzz/corpus/TARGET); a crashing input lands in build-fuzzers/artifacts/. Targets run
# $(nproc) at a time; each one's output is in build-fuzzers/logs/TARGET.log.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(toml_job hf_config safetensors safetensors_index torch_checkpoint jsonl_rows text_table squad
             token_classification vocab_tokenizer tokenizer_json trainer_state bnb_quant_state)
hours="" seconds="" runs=""
targets=()
while (($#)); do
  case $1 in
    --hours) hours=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=("${all_targets[@]}")
jobs=$(nproc 2>/dev/null || echo 2)
if [[ -n $hours ]]; then
  # The targets run `jobs` at a time, so each gets its share of jobs x the hours.
  seconds=$(python3 -c "print(max(1, int($hours * 3600 * $jobs / ${#targets[@]})))")
elif [[ -z $seconds && -z $runs ]]; then
  seconds=20
fi

build=build-fuzzers
compiler=$(command -v clang++ || command -v g++)
# No build type: fuzz/CMakeLists.txt picks -O1 and keeps assertions (no NDEBUG).
mkdir -p "$build/logs" "$build/artifacts"
# The build's output only when it fails.
if ! { cmake -S fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$compiler" &&
       cmake --build "$build" -j "$jobs" -- $(printf 'fuzz_%s ' "${targets[@]}"); } \
     >"$build/logs/build.log" 2>&1; then
  cat "$build/logs/build.log" >&2
  echo "fuzz: building the targets failed (above)" >&2
  exit 1
fi
# The targets write each input to a file: memory is faster than a disk.
[[ -w /dev/shm ]] && export TMPDIR=/dev/shm

# run_target NAME: one target for the time or runs asked; a short run (not --hours) starts
# from the seeds alone, so that its inputs are the same each time.
run_target() {
  local name=$1 corpus="$build/corpus/$1" limits=(-seed=1) status=0
  [[ -n $seconds ]] && limits+=(-max_total_time="$seconds")
  [[ -n $runs ]] && limits+=(-runs="$runs")
  if [[ -z $hours ]]; then
    corpus=$(mktemp -d)
  fi
  mkdir -p "$corpus"
  # Per-input limits: 20 s (the slowest inputs take well under 1 s), 2 GiB.
  "$build/fuzz_$name" "${limits[@]}" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$name-" "$corpus" "fuzz/corpus/$name" \
    >"$build/logs/$name.log" 2>&1 || status=$?
  [[ -n $hours ]] || rm -rf "$corpus"
  return $status
}

start=$(date +%s)
# Whatever ends this script ends the targets still running.
trap 'kill $(jobs -rp) 2>/dev/null || true' EXIT
declare -A pids
failed=0
for name in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do
    wait -n || true
  done
  run_target "$name" &
  pids[$name]=$!
done
for name in "${targets[@]}"; do
  if wait "${pids[$name]}"; then
    status=ok
  else
    status="FAILED (exit $?; see $build/logs/$name.log and $build/artifacts/)"
    failed=1
  fi
  done_line=$(grep -E '^Done [0-9]+ runs' "$build/logs/$name.log" | tail -1 || true)
  printf 'fuzz %-22s %s: %s\n' "$name" "${done_line:-no runs}" "$status"
  # A failure's report (the sanitizer's or libFuzzer's, and the input in base64), here too:
  # where the logs are not kept, the output is all there is.
  if [[ $status != ok ]]; then
    grep -v '# Uses:' "$build/logs/$name.log" | grep -A 40 -m 1 -E 'ERROR|runtime error|ALARM' |
      sed 's/^/  | /' || true
  fi
done
echo "fuzz: ${#targets[@]} targets in $(($(date +%s) - start)) s"
exit $failed
