"""Checks a timed trainer's op-times table (bertc --time-ops) against its plan.json.

    check_op_times.py TRAINER_OUTPUT PLAN_JSON STEPS

The table must say STEPS optimizer steps were measured; each row's runs a step must be the
estimate's (plan.json's step_time) for that op, the gradients' zeroing and the optimizer
step once a step; the measured names must be the estimate's, less the optimizer step's ops
(bert.adamw, timed as the one "optimizer step"), and plus bert.fill (the loss gradient's
seed, which the estimate does not price); the seconds must be non-negative and add up to
the timed total, the shares to 100%. Prints "ok: N ops". Python standard library only.
"""
import json
import re
import sys

output, plan_path, steps = open(sys.argv[1]).read(), sys.argv[2], int(sys.argv[3])
plan = json.load(open(plan_path))
header = re.search(r"op times: (\d+) optimizer step\(s\) measured .*, ([0-9.]+) s a step timed",
                   output)
assert header, output
assert int(header.group(1)) == steps, header.group(0)
rows = re.findall(r"^ +([0-9.]+) +([0-9.]+)% +(\d+)  (\S.*)$", output, re.M)
measured = {op: (float(seconds), float(share), int(runs)) for seconds, share, runs, op in rows}
assert len(measured) == len(rows) > 10, rows
estimated = {entry["op"]: entry for entry in plan["step_time"]}
unpriced = {"optimizer step": 1, "bert.fill": 1}
for op, (_, _, runs) in measured.items():
    expected = unpriced[op] if op in unpriced else estimated[op]["runs"]
    assert runs == expected, (op, runs, expected)
assert set(estimated) - set(measured) == {"bert.adamw"}, set(estimated) - set(measured)
assert set(measured) - set(estimated) == set(unpriced), set(measured) - set(estimated)
seconds = [value[0] for value in measured.values()]
assert min(seconds) >= 0 and abs(sum(seconds) - float(header.group(2))) <= 1e-5 * len(rows)
assert abs(sum(value[1] for value in measured.values()) - 100) <= 0.1 * len(rows)
print(f"ok: {len(measured)} ops")
