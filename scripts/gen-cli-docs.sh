#!/usr/bin/env bash
# Writes docs/cli.md, the command-line reference, from the programs' own help: `bertc --help`
# and the `--help` of a trainer (the tiny example's, built for the CPU). test/docs/cli.test
# fails when docs/cli.md differs from what this writes: run it after changing a flag.
#   scripts/gen-cli-docs.sh [OUT]   (default docs/cli.md; BERTC=PATH picks the bertc to ask,
#                                    default build/bin/bertc)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/docs/cli.md}
bertc=$(command -v "${BERTC:-$root/build/bin/bertc}") || {
  echo "gen-cli-docs.sh: no bertc at ${BERTC:-$root/build/bin/bertc} (build it first)" >&2
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bertc" "$root/examples/tiny/model.toml" --vram 1GB --target cpu -o "$work/tiny" >/dev/null
bertc_help=$("$bertc" --help)
trainer_help=$("$work/tiny/trainer" --help)
# The trainer's defaults name the job's files by absolute path: shown from the repository.
trainer_help=${trainer_help//"$root/"/}

cat >"$out" <<EOF
# Command-line reference

<!-- Written by scripts/gen-cli-docs.sh from the programs' --help; test/docs/cli.test fails
     when they differ. Edit the flags or the script, then run the script. -->

bertc has two programs: \`bertc\`, which plans a job ([dsl.md](dsl.md)) under a memory budget
and writes a trainer, and that \`trainer\`, which trains. What the flags do in practice:
[user-guide.md](user-guide.md) (budgets, the fit driver, the reports),
[training.md](training.md) (data, checkpoints, evaluation) and [gpu.md](gpu.md).

Sizes (\`--vram\`, \`--reserve\`, \`--host-ram\`, \`--max-shard-size\`) are written as 6GB,
6000MB, 6GiB or a byte count: \`GB\` and \`MB\` are powers of ten (6GB = 6·10^9 bytes),
\`GiB\` and \`MiB\` powers of two (6GiB = 6·2^30 bytes).

## bertc

\`\`\`text
$bertc_help
\`\`\`

Exit codes:

| code | meaning |
|---|---|
| 0 | done |
| 1 | invalid input, reported as \`file.toml:line:col: error: ...\` |
| 2 | usage (an unknown or malformed flag) |
| 3 | the budget cannot be met (the error names what dominates and what would fit) |
| 4 | building the trainer failed (the compiler's output is in \`OUTDIR/build.log\`) |

Environment:

| variable | effect |
|---|---|
| \`BERTC_ARCH\` | the \`--arch\` of the cuda targets when the flag is not given (\`sm_80\`) |
| \`BERTC_TRAINER_CXXFLAGS\` | flags for the host compiler that builds the trainer, before \`--cxxflags\` |

## trainer

The trainer's defaults come from the job it was compiled from; this is the tiny example's
(\`bertc examples/tiny/model.toml --vram 1GB --target cpu\`):

\`\`\`text
$trainer_help
\`\`\`

Exit codes:

| code | meaning |
|---|---|
| 0 | done |
| 1 | an error while running: unreadable data or checkpoint, a GPU the trainer cannot run on, a trainer built for another runtime |
| 2 | usage (an unknown or malformed flag; the usage follows the error) |
| 3 | out of memory: the device has less free memory than the plan needs (checked before step 1), or the host ran out |

Environment:

| variable | effect |
|---|---|
| \`OMP_NUM_THREADS\` | threads of a CPU trainer's kernels (default: every core); the results are the same at any count |
| \`BERTC_CUDA_SYNC_LAUNCHES=1\` | a CUDA trainer waits for every kernel, so that a fault names its kernel (slow) |
| \`BERTC_CUDA_GRAPHS=0\` | a CUDA trainer launches every micro-step directly instead of replaying CUDA graphs |
| \`BERTC_SIM_CHECKS=0\` | a \`--target cuda-sim\` trainer runs without the simulated GPU's memory and race checks |
| \`BERTC_SIM_DEVICE_MEMORY=SIZE\`, \`BERTC_SIM_ARCH=sm_XX\` | the simulated GPU's memory (default: \`--vram\`) and architecture |
EOF
