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
# The page is self-contained and shows the arena and every category.
assert "http" not in page and "<svg" in page
for name in categories:
    assert name in page, name
print("ok")
