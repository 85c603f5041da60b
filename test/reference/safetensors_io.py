"""Read and write the safetensors format with the standard library only (struct + json).

A file is: u64 little-endian header length, a JSON header {name: {dtype, shape, data_offsets}},
then the raw little-endian tensor bytes. Reading accepts F32, BF16 and F16 and yields F32,
and U8 and I8 as bytes, from one file or from a sharded model's shards (read_model); writing
emits F32, U8 and I8 (by the array's typecode) and is atomic (temporary file in the same
directory, then rename).
"""
import argparse
import array
import json
import os
import struct
import sys
import tempfile
from typing import Dict, List, NamedTuple, Optional

BYTES_PER_ELEMENT = {"F32": 4, "BF16": 2, "F16": 2, "U8": 1, "I8": 1}
# The dtype of each array typecode the writer takes.
DTYPE_OF_TYPECODE = {"f": "F32", "B": "U8", "b": "I8"}


class Tensor(NamedTuple):
    """A tensor: its shape and its elements in row-major order."""
    shape: List[int]
    data: array.array  # typecode 'f' (F32), 'B' (U8) or 'b' (I8)


def _element_count(shape):
    count = 1
    for dim in shape:
        count *= dim
    return count


def _decode_f32(raw: bytes) -> array.array:
    values = array.array("f")
    values.frombytes(raw)
    if sys.byteorder == "big":
        values.byteswap()
    return values


def _decode_bf16(raw: bytes) -> array.array:
    """BF16 is the upper half of an F32: place each little-endian pair above two zero bytes."""
    widened = bytearray(2 * len(raw))
    widened[2::4] = raw[0::2]
    widened[3::4] = raw[1::2]
    return _decode_f32(bytes(widened))


def _decode_f16(raw: bytes) -> array.array:
    return array.array("f", struct.unpack(f"<{len(raw) // 2}e", raw))


DECODERS = {"F32": _decode_f32, "BF16": _decode_bf16, "F16": _decode_f16,
            "U8": lambda raw: array.array("B", raw), "I8": lambda raw: array.array("b", raw)}


def read_header(path: str) -> dict:
    """The JSON header of `path` (including "__metadata__" when present)."""
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(header_len))


def read_safetensors(path: str) -> Dict[str, Tensor]:
    """All tensors of `path`, floats converted to F32, keyed by name."""
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
        payload = f.read()
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype, shape = entry["dtype"], entry["shape"]
        if dtype not in DECODERS:
            raise ValueError(f"{path}: tensor {name} has unsupported dtype {dtype}")
        begin, end = entry["data_offsets"]
        if end - begin != _element_count(shape) * BYTES_PER_ELEMENT[dtype] or end > len(payload):
            raise ValueError(f"{path}: tensor {name} has data_offsets {begin}..{end} inconsistent with {dtype}{shape}")
        tensors[name] = Tensor(list(shape), DECODERS[dtype](payload[begin:end]))
    return tensors


def read_model(path: str) -> Dict[str, Tensor]:
    """All tensors of a model, converted to F32, keyed by name: a safetensors file, a sharded
    model's index (model.safetensors.index.json, each tensor read from the shard its
    weight_map names, which must hold exactly the tensors mapped to it), or a model folder
    holding model.safetensors or, else, the index, as from_pretrained prefers them."""
    if os.path.isdir(path):
        single = os.path.join(path, "model.safetensors")
        path = single if os.path.exists(single) else os.path.join(path, "model.safetensors.index.json")
    if not path.endswith(".safetensors.index.json"):
        return read_safetensors(path)
    with open(path, encoding="utf-8") as f:
        weight_map = json.load(f)["weight_map"]
    tensors = {}
    for shard in sorted(set(weight_map.values())):
        if os.path.basename(shard) != shard:
            raise ValueError(f"{path}: shard {shard} is not a file beside the index")
        held = read_safetensors(os.path.join(os.path.dirname(path), shard))
        mapped = {name for name, file in weight_map.items() if file == shard}
        if set(held) != mapped:
            raise ValueError(f"{path}: {shard} holds {sorted(set(held) ^ mapped)} other than the index says")
        tensors.update(held)
    return tensors


def _build_header(tensors: Dict[str, Tensor], metadata: Optional[Dict[str, str]]) -> bytes:
    """JSON header with contiguous offsets in name order, space-padded to a multiple of 8."""
    header = {"__metadata__": metadata} if metadata else {}
    offset = 0
    for name in sorted(tensors):
        tensor = tensors[name]
        if len(tensor.data) != _element_count(tensor.shape):
            raise ValueError(f"tensor {name}: {len(tensor.data)} elements for shape {tensor.shape}")
        dtype = DTYPE_OF_TYPECODE[getattr(tensor.data, "typecode", "f")]
        size = BYTES_PER_ELEMENT[dtype] * len(tensor.data)
        header[name] = {"dtype": dtype, "shape": list(tensor.shape), "data_offsets": [offset, offset + size]}
        offset += size
    encoded = json.dumps(header, separators=(",", ":")).encode()
    return encoded + b" " * (-len(encoded) % 8)


def write_safetensors(path: str, tensors: Dict[str, Tensor], metadata: Optional[Dict[str, str]] = None) -> None:
    """Write `tensors` (F32 unless an array of bytes) to `path` atomically; `metadata` maps
    strings to strings."""
    header = _build_header(tensors, metadata)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp_path = tempfile.mkstemp(prefix=".tmp-", suffix=".safetensors", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(header)))
            f.write(header)
            for name in sorted(tensors):
                data = tensors[name].data
                if getattr(data, "typecode", "f") == "f":
                    data = array.array("f", data)
                    if sys.byteorder == "big":
                        data.byteswap()
                f.write(data.tobytes())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp_path, path)
    except BaseException:
        os.unlink(tmp_path)
        raise


def main(argv):
    parser = argparse.ArgumentParser(description="List the tensors of a safetensors file.")
    parser.add_argument("file")
    args = parser.parse_args(argv)
    for name, entry in read_header(args.file).items():
        if name != "__metadata__":
            print(f"{name}\t{entry['dtype']}\t{entry['shape']}")


if __name__ == "__main__":
    main(sys.argv[1:])
