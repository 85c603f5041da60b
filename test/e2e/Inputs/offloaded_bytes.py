"""Checks plan.json's offloaded checkpoints against the planned IR's own types.

Reads the @micro_step of an -emit=mlir-planned file and sums the bytes of each bert.offload's
result type (its dynamic dimensions at --batch and --seq); prints how many of the offloaded
tensors are block inputs (those an RMSNorm's gradient reads back after their reload), the
count and bytes, and whether they equal plan.json's host.offloaded_checkpoints and
host.checkpoints.
Usage: offloaded_bytes.py PLANNED_MLIR PLAN_JSON --batch B --seq S
"""
import argparse
import json
import re

BYTES = {"f32": 4, "bf16": 2, "f16": 2}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mlir")
    parser.add_argument("plan")
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--seq", type=int, required=True)
    args = parser.parse_args()
    text = open(args.mlir).read()
    step = text[text.index("func.func @micro_step"):]
    step = step[:step.index("\n  }\n")]
    types = re.findall(r"= bert\.offload %\S+ .*-> tensor<([^>]*)>", step)
    total = 0
    for t in types:
        *dims, element = t.split("x")
        dynamic = iter([args.batch, args.seq])
        sizes = [next(dynamic) if d == "?" else int(d) for d in dims]
        elements = 1
        for d in sizes:
            elements *= d
        total += elements * BYTES[element]
    plan = json.load(open(args.plan))["host"]
    reloads = set(re.findall(r"(%\S+) = bert\.reload", step))
    norm_inputs = {}
    for line in step.split("\n"):
        m = re.search(r"bert\.rms_norm_grad %\S+, (%\S+),.*: \(tensor<[^>]*>, tensor<([^>]*)>", line)
        if m and m.group(1) in reloads:
            norm_inputs[m.group(1)] = m.group(2)
    for shape in sorted(set(norm_inputs.values())):
        *dims, element = shape.split("x")
        dynamic = iter([args.batch, args.seq])
        sizes = [str(next(dynamic)) if d == "?" else d for d in dims]
        count = list(norm_inputs.values()).count(shape)
        print(f"block inputs offloaded: {count} of [{', '.join(sizes)}] {element}")
    agrees = total == plan["checkpoints"] and len(types) == plan["offloaded_checkpoints"]
    print(f"offloaded tensors: {len(types)}, {total} bytes; plan.json {plan['offloaded_checkpoints']}, "
          f"{plan['checkpoints']} bytes")
    print(f"plan.json agrees: {'yes' if agrees else 'no'}")


if __name__ == "__main__":
    main()
