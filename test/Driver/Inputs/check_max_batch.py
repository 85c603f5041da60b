"""Checks a max_batch.json (max-batch.test): every row fits the arena budget, and a
longer sequence never allows a larger micro-batch."""
import json
import sys

table = json.load(open(sys.argv[1]))
budget = int(sys.argv[2])
assert table["arena_budget_bytes"] == budget
rows = table["rows"]
assert [r["seq_len"] for r in rows] == [64, 128], rows
for row in rows:
    assert row["max_micro_batch"] >= 1 and 0 < row["arena_bytes"] <= budget, row
assert rows[1]["max_micro_batch"] <= rows[0]["max_micro_batch"], rows
print("ok")
