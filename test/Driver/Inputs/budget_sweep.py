"""Plan one job at a falling series of budgets and check the fit driver's promises.

    budget_sweep.py BERTC MODEL.toml OUTDIR 8MB 6MB 4MB ...

For each budget (largest first), `BERTC MODEL --target cpu --vram B -emit=plan -o OUTDIR`; prints one line
per budget ("B: peak P, micro M x A, recompute R" or "B: does not fit") and exits 1, naming
the budget, when a plan's peak exceeds its budget, when a lower budget gives a higher peak,
or when a budget fits after a larger one did not. Python 3 standard library only.
"""
import json
import subprocess
import sys

UNITS = {"GB": 10**9, "MB": 10**6, "KB": 10**3}


def to_bytes(text):
    return int(float(text[:-2]) * UNITS[text[-2:]])


def main(argv):
    bertc, model, out, budgets = argv[0], argv[1], argv[2], argv[3:]
    last_peak, refused = None, None
    for budget in budgets:
        result = subprocess.run([bertc, model, "--target", "cpu", "--vram", budget,
                                 "-emit=plan", "-o", out], capture_output=True, text=True)
        if result.returncode == 3:
            print(f"{budget}: does not fit")
            refused = refused or budget
            continue
        if result.returncode != 0:
            sys.exit(f"{budget}: bertc failed ({result.returncode}):\n{result.stderr}")
        with open(f"{out}/plan.json") as f:
            plan = json.load(f)
        peak = plan["peak_bytes"]
        print(f"{budget}: peak {peak}, micro {plan['micro_batch']} x "
              f"{plan['accumulation_steps']}, recompute {plan['recompute_flops']:.0f}")
        if peak > to_bytes(budget):
            sys.exit(f"{budget}: the peak {peak} exceeds the budget")
        if last_peak is not None and peak > last_peak:
            sys.exit(f"{budget}: the peak {peak} rose above {last_peak} as the budget fell")
        if refused:
            sys.exit(f"{budget}: fits, but the larger budget {refused} did not")
        last_peak = peak


if __name__ == "__main__":
    main(sys.argv[1:])
