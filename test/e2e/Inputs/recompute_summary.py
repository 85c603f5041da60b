"""Print what a plan.json says about recomputation, one fact a line, for FileCheck.

    recompute_flops 0 | recompute_flops positive
    within budget: yes | no
    op bert.dropout            (each recomputed op kind once, sorted)
"""
import json
import sys


def main(path):
    with open(path) as f:
        plan = json.load(f)
    flops = plan["recompute_flops"]
    print("recompute_flops", "positive" if flops > 0 else flops)
    print("within budget:", "yes" if plan["arena_bytes"] <= plan["budget_bytes"] else "no")
    total = sum(entry["flops"] for entry in plan["recompute"])
    print("entries add up:", "yes" if abs(total - flops) <= 1e-9 * max(flops, 1) else "no")
    for op in sorted({entry["op"] for entry in plan["recompute"]}):
        print("op", op)


if __name__ == "__main__":
    main(sys.argv[1])
