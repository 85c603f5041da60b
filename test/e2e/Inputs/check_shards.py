"""Checks that FOLDER holds a model sharded as transformers' save_pretrained(max_shard_size=
LIMIT) writes one, and prints what it holds; exits 1 naming the first difference.

- model.safetensors.index.json is json.dumps(index, indent=2, sort_keys=True) and a newline;
- its weight_map names shards model-00001-of-0000K.safetensors .. K, which are the folder's
  only weights files (no model.safetensors, no shard of another count);
- each shard holds exactly the tensors the index maps to it, at most LIMIT bytes of tensor
  data unless it holds a single tensor (one larger than the limit has a shard of its own);
- metadata.total_size is the bytes of tensor data of all shards.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from safetensors_io import read_header  # noqa: E402

UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9}


def parse_limit(text):
    number, unit = re.fullmatch(r"([0-9]+)([KMG]?B)", text).groups()
    return int(number) * UNITS[unit]


def main(folder, limit_text):
    limit = parse_limit(limit_text)
    index_path = os.path.join(folder, "model.safetensors.index.json")
    with open(index_path, encoding="utf-8") as f:
        text = f.read()
    index = json.loads(text)
    if text != json.dumps(index, indent=2, sort_keys=True) + "\n":
        sys.exit(f"{index_path}: not as json.dumps(index, indent=2, sort_keys=True) writes it")
    weight_map = index["weight_map"]
    count = len(set(weight_map.values()))
    expected = {f"model-{i:05d}-of-{count:05d}.safetensors" for i in range(1, count + 1)}
    if set(weight_map.values()) != expected:
        sys.exit(f"{index_path}: shards {sorted(set(weight_map.values()))}, not 1..{count}")
    weights = {name for name in os.listdir(folder)
               if name.startswith("model") and name.endswith(".safetensors")}
    if weights != expected:
        sys.exit(f"{folder}: weights files {sorted(weights ^ expected)} besides the index's")
    total = 0
    for shard in sorted(expected):
        header = {name: entry for name, entry in read_header(os.path.join(folder, shard)).items()
                  if name != "__metadata__"}
        mapped = {name for name, file in weight_map.items() if file == shard}
        if set(header) != mapped:
            sys.exit(f"{shard}: holds {sorted(set(header) ^ mapped)} other than the index says")
        data = sum(entry["data_offsets"][1] - entry["data_offsets"][0] for entry in header.values())
        if data > limit and len(header) > 1:
            sys.exit(f"{shard}: {data} bytes of {len(header)} tensors, over the limit of {limit}")
        total += data
    if index["metadata"]["total_size"] != total:
        sys.exit(f"{index_path}: total_size {index['metadata']['total_size']}, shards hold {total}")
    print(f"{count} shards, {len(weight_map)} tensors, total_size {total}")


if __name__ == "__main__":
    main(*sys.argv[1:])
