"""What the benchmark scripts share: where the repository and bertc are, running a command
that must succeed, and printing a plain-text table. Python 3 standard library only."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
MODELS_DIR = BENCH_DIR / "models"
# The bertc under test; override with BERTC=/path/to/bertc.
BERTC = Path(os.environ.get("BERTC", REPO_ROOT / "build" / "bin" / "bertc"))
# Budget large enough that no benchmark model is ever refused or shrunk to fit.
VRAM = "64GB"


def require_bertc():
    """Exits with a message when bertc has not been built."""
    if not os.access(BERTC, os.X_OK):
        sys.exit(f"bench: {BERTC} not found; build it with: ninja -C {REPO_ROOT / 'build'} bertc")


def run_checked(args, **kwargs):
    """Runs a command with stdout discarded; on failure exits, showing its stderr."""
    result = subprocess.run([str(a) for a in args], stdout=kwargs.pop("stdout", subprocess.DEVNULL),
                            stderr=subprocess.PIPE, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"bench: {' '.join(map(str, args))} failed ({result.returncode}):\n{result.stderr}")
    return result


def read_plan(out_dir):
    """plan.json of a bertc output directory."""
    return json.loads((Path(out_dir) / "plan.json").read_text())


def job_copy(tmp, model, name, seq, batch, edit=lambda text: text):
    """TMP/NAME.toml: bench/models/MODEL.toml at seq_len `seq`, batch `batch`, precision
    auto, its `from` folder made absolute, then through `edit` (a function of the TOML text)."""
    text = (MODELS_DIR / f"{model}.toml").read_text()
    text = re.sub(r'from = "([^/"][^"]*)"', lambda m: f'from = "{MODELS_DIR / m.group(1)}"', text)
    text = re.sub(r"seq_len = \d+", f"seq_len = {seq}", text)
    text = re.sub(r"batch = \d+", f"batch = {batch}", text)
    text = re.sub(r'precision = "\w+"', 'precision = "auto"', text)
    path = Path(tmp) / f"{name}.toml"
    path.write_text(edit(text))
    return path


def plan_or_none(args, out):
    """plan.json of `bertc ARGS -emit=plan -o OUT`, or None when nothing fits (exit 3); any
    other failure exits, showing bertc's stderr."""
    result = subprocess.run([str(BERTC), *map(str, args), "-emit=plan", "-o", str(out)],
                            capture_output=True, text=True)
    if result.returncode == 3:
        return None
    if result.returncode != 0:
        sys.exit(f"bench: bertc {' '.join(map(str, args))} failed:\n{result.stderr}")
    return read_plan(out)


def print_table(header, rows):
    """Prints rows under header as a Markdown table, numbers right-aligned."""
    cells = [header] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]

    def line(row):
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(row, widths))) + " |"

    print(line(cells[0]))
    print("|" + "|".join("-" * (w + 1) + (":" if i else "-") for i, w in enumerate(widths)) + "|")
    for row in cells[1:]:
        print(line(row))
