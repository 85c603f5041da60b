"""Checks what plan.json and memory.html promise about each other (plan-report.test)."""
import json
import sys

plan = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
categories = plan["categories"]
# The categories account for every byte the budget pays for.
assert sum(categories.values()) == plan["peak_bytes"], (categories, plan["peak_bytes"])
assert plan["peak_bytes"] == plan["arena_bytes"] + categories["reserve"]
# No packing beats the max-live bound, and the greedy packing stays close to it here.
assert plan["lower_bound_bytes"] <= plan["arena_bytes"] <= 1.03 * plan["lower_bound_bytes"]
assert plan["peak_bytes"] <= plan["budget_bytes"]
assert plan["step_flops"] > 0 and plan["estimated_step_seconds"] > 0
# The step's time by op: each op once, longest first, adding up to the estimate and flops.
times = plan["step_time"]
assert len({entry["op"] for entry in times}) == len(times) > 10, times
assert all(a["seconds"] >= b["seconds"] for a, b in zip(times, times[1:])), times
assert abs(sum(e["seconds"] for e in times) - plan["estimated_step_seconds"]) <= \
    1e-9 * plan["estimated_step_seconds"], times
assert abs(sum(e["flops"] for e in times) - plan["step_flops"]) <= 1e-9 * plan["step_flops"]
assert all(e["runs"] >= 1 and e["launches"] >= 0 for e in times), times
# The page is self-contained and shows the arena and every category.
assert "http" not in page and "<svg" in page
for name in categories:
    assert name in page, name
# The page's step-time table has a row for each of plan.json's entries, in its order.
rows = [page.find(f'<tr data-op="{entry["op"]}"') for entry in times]
assert 'id="step-time"' in page and -1 not in rows and rows == sorted(rows), rows
print("ok")
