"""Split a model folder's model.safetensors into two shards and an index, as
save_pretrained(max_shard_size=...) lays them out: the tensors in name order, those up to
and including SPLIT_AFTER in model-00001-of-00002.safetensors, the rest in the second.
Splitting right after a bitsandbytes weight's packed codes puts its absmax, maps and
quant_state in the other shard.

Usage: split_shards.py FOLDER SPLIT_AFTER
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from safetensors_io import read_header, read_safetensors, write_safetensors  # noqa: E402


def main():
    folder, split_after = sys.argv[1:3]
    single = os.path.join(folder, "model.safetensors")
    metadata = read_header(single).get("__metadata__")
    tensors = read_safetensors(single)
    if split_after not in tensors:
        sys.exit(f"{single} holds no {split_after}")
    names = sorted(tensors)
    cut = names.index(split_after) + 1
    shards = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    weight_map = {}
    for shard, part in zip(shards, (names[:cut], names[cut:])):
        write_safetensors(os.path.join(folder, shard), {name: tensors[name] for name in part}, metadata)
        weight_map.update({name: shard for name in part})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f, indent=2)
    os.remove(single)


if __name__ == "__main__":
    main()
