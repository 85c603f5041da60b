"""Check a merged LoRA model folder against its base model and adapters, computed here.

Usage: check_merge.py BASE.safetensors ADAPTER.safetensors MERGED_FOLDER SCALING [--fan-in-fan-out]
Each adapted weight W (the adapter's base_model.model.<layer>.lora_A/B.weight) must be
W + SCALING * B A within 1e-6 relative (fp32), every other tensor of the base as it was,
and the merged folder must hold no adapter tensor. With --fan-in-fan-out (PEFT's flag for
GPT-2's Conv1D layers) the weights are stored [in, out] and take (B A) transposed. Prints
one line; exits 1 on a miss.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from safetensors_io import read_model  # noqa: E402

PREFIX = "base_model.model."


def main():
    base, adapters, merged = (read_model(path) for path in sys.argv[1:4])
    scaling = float(sys.argv[4])
    fan_in_fan_out = sys.argv[5:] == ["--fan-in-fan-out"]
    if any(".lora_" in name for name in merged):
        sys.exit("the merged folder holds adapter tensors")
    if sorted(merged) != sorted(base):
        sys.exit(f"the merged folder's tensors differ from the base's: {sorted(set(merged) ^ set(base))}")
    adapted = 0
    for name, tensor in base.items():
        stem = name[: -len(".weight")]
        lora_a = adapters.get(PREFIX + stem + ".lora_A.weight")
        lora_b = adapters.get(PREFIX + stem + ".lora_B.weight")
        expected = list(tensor.data)
        if lora_a is not None and name.endswith(".weight"):
            adapted += 1
            rank, cols = lora_a.shape
            rows = lora_b.shape[0]
            for r in range(rows):
                for c in range(cols):
                    delta = sum(lora_b.data[r * rank + k] * lora_a.data[k * cols + c] for k in range(rank))
                    expected[c * rows + r if fan_in_fan_out else r * cols + c] += scaling * delta
        for got, want in zip(merged[name].data, expected):
            if abs(got - want) > 1e-6 * max(abs(want), 1e-3):
                sys.exit(f"{name}: {got} where {want} is expected")
    print(f"merged {adapted} adapted weights, {len(base) - adapted} others unchanged")


if __name__ == "__main__":
    main()
