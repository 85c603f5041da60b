"""bitsandbytes' weight quantization in plain PyTorch (1.13, CPU), written from its code
(bitsandbytes/functional.py, backends/default/ops.py, csrc/kernels.cu):

- quantize_4bit(A, blocksize=64, compress_statistics, quant_type="nf4") and dequantize_4bit,
  as its CUDA kernels compute them (kQuantizeBlockwise, dQuantizeNF4, kDequantizeBlockwise):
  absmax per block of 64, each value times the absmax's reciprocal (an all-zero block's NaN
  takes code 0), NF4 codes by dQuantizeNF4's 15 constants as nvcc rounds them (each decimal
  once to fp32), two codes a byte, the first in the high nibble; double quantization takes
  the absmaxes' fp32 mean and quantize_blockwise's 8-bit codes of what is left (blocks of
  256, create_dynamic_map's signed map, dQuantize's nearest code with ties to the even one);
- int8 row-wise quantization, int8_vectorwise_quant of its PyTorch backend (round(A * (127 /
  absmax)), a row of zeros 0 as on its GPUs), read back as its 8-bit matmuls do (CB times
  SCB * (1 / 127), in the output dtype);
- the tensors a Linear4bit's state dict saves (QuantState.as_dict(packed=True)), written to
  a safetensors file under bitsandbytes' names, the quant_state JSON byte for byte.

`write DIR` writes inputs.safetensors (random fp32 weights, the map and means bertc must
quantize with), expected.safetensors (this reference's codes and dequantized values) and
bnb.safetensors (pre-quantized weights as bitsandbytes saves them); `quantize-model SOURCE
FOLDER [--double-quant]` saves a Llama-family model folder as a bitsandbytes 4-bit one; `compare EXPECTED ACTUAL
[--inputs INPUTS]` checks every tensor of EXPECTED bit for bit against bertc's, and bertc's
absmax means against torch's (test/e2e/bnb-quant-parity.test).
"""
import argparse
import array
import json
import os
import re
import struct
import sys
from fractions import Fraction

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import Tensor, read_safetensors, write_safetensors  # noqa: E402

BLOCKSIZE = 64
NESTED_BLOCKSIZE = 256

# get_4bit_type("nf4"): already in [-1, 1], so its division by the largest magnitude keeps them.
NF4_VALUES = torch.tensor([
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
    0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
    0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0], dtype=torch.float32)

# dQuantizeNF4's decision constants, ascending, as written in csrc/kernels.cu.
NF4_THRESHOLD_TEXT = [
    "-0.8480964004993439", "-0.6106329262256622", "-0.4599952697753906", "-0.33967943489551544",
    "-0.23460740596055984", "-0.13791173323988914", "-0.045525018125772476",
    "0.03979014977812767", "0.1202552504837513", "0.2035212516784668", "0.2920137718319893",
    "0.3893125355243683", "0.5016634166240692", "0.6427869200706482", "0.8614784181118011"]


def _f32_bits(value):
    return struct.unpack("<I", struct.pack("<f", value))[0]


def _f32_from_bits(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def f32_literal(text):
    """The fp32 a C++ or CUDA compiler makes of the literal `text`f: the decimal rounded once
    to the nearest float, a tie to the even one (Python's float() would round to a double
    first, and a double that lies halfway between two floats then goes to the even one)."""
    exact = Fraction(text)
    guess = _f32_bits(float(text))  # within an ulp of the answer; a neighbour's bits are +-1
    best = min([guess - 1, guess, guess + 1],
               key=lambda bits: (abs(Fraction(_f32_from_bits(bits)) - exact), bits & 1))
    return _f32_from_bits(best)


NF4_THRESHOLDS = torch.tensor([f32_literal(text) for text in NF4_THRESHOLD_TEXT], dtype=torch.float32)


def create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8):
    """bitsandbytes.functional.create_dynamic_map, as it computes it (torch.linspace in fp32,
    whose bits depend on the CPU)."""
    data = []
    non_sign_bits = total_bits - 1
    for i in range(max_exponent_bits):
        fraction_items = int(2 ** (i + non_sign_bits - max_exponent_bits) + 1 if signed
                             else 2 ** (i + non_sign_bits - max_exponent_bits + 1) + 1)
        boundaries = torch.linspace(0.1, 1, fraction_items, dtype=torch.float32)
        means = (boundaries[:-1] + boundaries[1:]) / 2.0
        data += ((10 ** (-(max_exponent_bits - 1) + i)) * means).tolist()
        if signed:
            data += (-(10 ** (-(max_exponent_bits - 1) + i)) * means).tolist()
    data.append(0)
    data.append(1.0)
    data.sort()
    return torch.tensor(data, dtype=torch.float32)


def _blocks(flat, blocksize):
    """`flat` zero-padded to whole blocks, one a row (the kernels load past the end as 0)."""
    count = -(-flat.numel() // blocksize)
    padded = torch.zeros(count * blocksize, dtype=flat.dtype)
    padded[:flat.numel()] = flat
    return padded.view(count, blocksize)


def _scaled_blocks(flat, blocksize):
    """Each block's absmax and its values times the absmax's reciprocal (NaN where it is 0)."""
    blocks = _blocks(flat, blocksize)
    absmax = blocks.abs().max(dim=1).values
    return absmax, blocks * (1.0 / absmax).unsqueeze(1)


def quantize_blockwise(flat, code, blocksize):
    """quantize_blockwise's codes and absmaxes: dQuantize's nearest code of each scaled value,
    a tie between two codes to the even one, NaN to code 0."""
    absmax, scaled = _scaled_blocks(flat, blocksize)
    scaled = scaled.flatten()[:flat.numel()]
    midpoints = (code[:-1] + code[1:]) / 2
    index = torch.bucketize(scaled, midpoints)  # midpoints[i - 1] < x <= midpoints[i]: i
    tie = (index < code.numel() - 1) & (scaled == midpoints[index.clamp(max=code.numel() - 2)])
    index = torch.where(tie & (index % 2 == 1), index + 1, index)
    index[torch.isnan(scaled)] = 0
    return index.to(torch.uint8), absmax


def dequantize_blockwise(codes, absmax, code, blocksize):
    return code[codes.long()] * absmax.repeat_interleave(blocksize)[:codes.numel()]


def quantize_4bit(A, compress_statistics, nested_code=None):
    """quantize_4bit(A, blocksize=64, quant_type="nf4"): the packed codes [(n + 1) // 2, 1]
    and the state QuantState.as_dict holds."""
    flat = A.reshape(-1).float()
    absmax, scaled = _scaled_blocks(flat, BLOCKSIZE)
    codes = torch.bucketize(scaled, NF4_THRESHOLDS)  # a value on a threshold stays below
    codes[torch.isnan(scaled)] = 0
    codes = codes.flatten()[:flat.numel() + flat.numel() % 2].to(torch.uint8)
    packed = (codes[0::2] << 4 | codes[1::2]).view(-1, 1)
    state = {"quant_type": "nf4", "absmax": absmax, "blocksize": BLOCKSIZE,
             "quant_map": NF4_VALUES.clone(), "dtype": str(A.dtype)[len("torch."):],
             "shape": tuple(A.shape)}
    if compress_statistics:
        offset = absmax.mean()
        nested_code = create_dynamic_map() if nested_code is None else nested_code
        qabsmax, nested_absmax = quantize_blockwise(absmax - offset, nested_code, NESTED_BLOCKSIZE)
        state.update({"absmax": qabsmax, "nested_absmax": nested_absmax,
                      "nested_blocksize": NESTED_BLOCKSIZE, "nested_quant_map": nested_code.clone(),
                      "nested_dtype": "float32", "nested_offset": offset.item()})
    return packed, state


def state_absmax(state):
    """The fp32 absmaxes of a state, the nested ones dequantized and the mean added back."""
    if "nested_absmax" not in state:
        return state["absmax"]
    absmax = dequantize_blockwise(state["absmax"], state["nested_absmax"], state["nested_quant_map"],
                                  state["nested_blocksize"])
    return absmax + torch.tensor(state["nested_offset"], dtype=torch.float32)


def dequantize_4bit(packed, state, dtype):
    count = 1
    for dim in state["shape"]:
        count *= dim
    packed = packed.reshape(-1)
    codes = torch.stack([packed >> 4, packed & 0x0F], dim=1).flatten()[:count].long()
    absmax = state_absmax(state).repeat_interleave(BLOCKSIZE)[:count]
    return (state["quant_map"][codes] * absmax).to(dtype).reshape(state["shape"])


def int8_vectorwise_quant(A):
    row_stats = A.abs().max(dim=1).values.float()
    scaled = A * (127.0 / row_stats.unsqueeze(-1))
    scaled[torch.isnan(scaled)] = 0
    return torch.round(scaled).to(torch.int8), row_stats


def int8_dequant(CB, SCB, dtype):
    return CB.to(dtype).mul_(SCB.unsqueeze(1).mul(1.0 / 127.0))


def linear4bit_tensors(prefix, packed, state):
    """The state-dict entries Linear4bit._save_to_state_dict adds for its weight: the packed
    weight, the tensors of QuantState.as_dict(packed=True) and its JSON under
    weight.quant_state.bitsandbytes__nf4 (json.dumps of the non-tensor items, in order)."""
    tensors = {prefix + "weight": packed}
    non_tensor = {}
    for key, value in state.items():
        if isinstance(value, torch.Tensor):
            tensors[prefix + "weight." + key] = value
        else:
            non_tensor[key] = value
    text = json.dumps(non_tensor).encode("utf-8")
    tensors[prefix + "weight.quant_state.bitsandbytes__nf4"] = torch.tensor(list(text), dtype=torch.uint8)
    return tensors


def _to_tensor(value):
    """A torch tensor as safetensors_io writes it: F32 values (16-bit ones widened, exactly),
    U8 or I8 bytes."""
    if value.dtype == torch.uint8:
        return Tensor(list(value.shape), array.array("B", value.flatten().tolist()))
    if value.dtype == torch.int8:
        return Tensor(list(value.shape), array.array("b", value.flatten().tolist()))
    return Tensor(list(value.shape), array.array("f", value.float().flatten().tolist()))


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def random_weights(seed):
    """Weights of shapes that are not whole blocks (a value, an odd count, a partial block of
    64 and of 256 blocks), rows of different scales, a row of zeros (an all-zero NF4 block and
    int8 row), and a block of NF4 thresholds and midpoints, where codes are decided by ties."""
    generator = torch.Generator().manual_seed(seed)
    weights = {}
    for shape in [(1, 1), (1, 7), (3, 43), (64, 64), (17, 1000), (300, 257)]:
        scales = torch.logspace(-3, 0, shape[0]).unsqueeze(1)
        weights[f"w{shape[0]}x{shape[1]}"] = torch.randn(shape, generator=generator) * scales
    zeros = torch.randn((4, 96), generator=generator)
    zeros[1] = 0
    weights["with_zero_row"] = zeros
    ties = [1.0] + NF4_THRESHOLDS.tolist() + ((NF4_VALUES[:-1] + NF4_VALUES[1:]) / 2).tolist()
    weights["thresholds"] = torch.tensor(ties + [0.0] * (64 - len(ties)), dtype=torch.float32).view(1, 64)
    return weights


def write(directory, seed):
    os.makedirs(directory, exist_ok=True)
    nested_code = create_dynamic_map()
    inputs = {"nested_quant_map": _to_tensor(nested_code)}
    expected, bnb = {}, {}
    for name, weight in random_weights(seed).items():
        inputs[name] = _to_tensor(weight)
        packed, state = quantize_4bit(weight, compress_statistics=False)
        _, nested = quantize_4bit(weight, compress_statistics=True, nested_code=nested_code)
        inputs[name + ".absmax_mean"] = _to_tensor(torch.tensor([nested["nested_offset"]]))
        expected[name + ".nf4.packed"] = _to_tensor(packed.flatten())
        expected[name + ".nf4.absmax"] = _to_tensor(state["absmax"])
        expected[name + ".nf4.absmax_codes"] = _to_tensor(nested["absmax"])
        expected[name + ".nf4.nested_absmax"] = _to_tensor(nested["nested_absmax"])
        q, row_stats = int8_vectorwise_quant(weight)
        expected[name + ".int8.q"] = _to_tensor(q)
        expected[name + ".int8.absmax"] = _to_tensor(row_stats)
        for dtype_name, dtype in DTYPES.items():
            expected[f"{name}.nf4.{dtype_name}"] = _to_tensor(dequantize_4bit(packed, state, dtype))
            expected[f"{name}.nf4_nested.{dtype_name}"] = _to_tensor(dequantize_4bit(packed, nested, dtype))
            expected[f"{name}.int8.{dtype_name}"] = _to_tensor(int8_dequant(q, row_stats, dtype))
        # As a bf16 model's Linear4bit holds it, both forms, under bitsandbytes' names.
        bf16 = weight.to(torch.bfloat16)
        for form, nested_form in [("plain", False), ("nested", True)]:
            prefix = f"model.{name}.{form}."
            packed16, state16 = quantize_4bit(bf16, nested_form, nested_code)
            for key, value in linear4bit_tensors(prefix, packed16, state16).items():
                bnb[key] = _to_tensor(value)
            for dtype_name, dtype in DTYPES.items():
                expected[f"{prefix}weight.{dtype_name}"] = _to_tensor(dequantize_4bit(packed16, state16, dtype))
    write_safetensors(os.path.join(directory, "inputs.safetensors"), inputs)
    write_safetensors(os.path.join(directory, "expected.safetensors"), expected)
    write_safetensors(os.path.join(directory, "bnb.safetensors"), bnb)


def _bits(tensor):
    return tensor.data.tobytes()


def _ulps_apart(a, b):
    """How many fp32 steps lie between two floats of the same sign."""
    return abs(struct.unpack("<i", struct.pack("<f", a))[0] - struct.unpack("<i", struct.pack("<f", b))[0])


def compare_means(inputs_path, actual_path):
    """bertc's absmax means (NAME.nf4.absmax_mean) against torch's fp32 mean, which
    bitsandbytes subtracts: summed in fp32 in the order of the device, so up to an ulp from
    the correctly rounded mean bertc computes. Fails beyond 1 ulp."""
    inputs, actual = read_safetensors(inputs_path), read_safetensors(actual_path)
    means = {name[:-len(".absmax_mean")]: tensor.data[0] for name, tensor in inputs.items()
             if name.endswith(".absmax_mean")}
    apart = [_ulps_apart(actual[name + ".nf4.absmax_mean"].data[0], mean) for name, mean in means.items()]
    print(f"absmax means: {apart.count(0)} of {len(apart)} equal to torch's, "
          f"{sum(1 for ulps in apart if ulps > 1)} more than 1 ulp apart")
    return 0 if max(apart) <= 1 else 1


def compare(expected_path, actual_path):
    expected, actual = read_safetensors(expected_path), read_safetensors(actual_path)
    identical, values, failures = 0, 0, []
    for name, tensor in sorted(expected.items()):
        if name not in actual:
            failures.append(f"{name}: missing from {actual_path}")
        elif actual[name].shape != tensor.shape or _bits(actual[name]) != _bits(tensor):
            differ = sum(a != e for a, e in zip(actual[name].data, tensor.data))
            failures.append(f"{name}: {differ} of {len(tensor.data)} values differ "
                            f"(shape {actual[name].shape} vs {tensor.shape})")
        else:
            identical += 1
            values += len(tensor.data)
    print(f"bit-identical: {identical} of {len(expected)} tensors ({values} values)")
    for failure in failures[:20]:
        print(f"DIFFERS: {failure}")
    return 0 if not failures else 1


# The linear layers' weights of a Llama-family model (what load_in_4bit quantizes: every
# nn.Linear but the LM head).
LAYER_LINEAR = re.compile(r"model\.layers\.\d+\.(self_attn|mlp)\.\w+_proj\.weight")


def quantize_model(source, folder, double_quant, keep_16_bit=False):
    """A Llama-family model as from_pretrained(load_in_4bit=True, bnb_4bit_quant_type="nf4",
    torch_dtype=bfloat16).save_pretrained(FOLDER) writes it: every tensor in bf16 (stored
    F32 here, exactly), the layers' linear weights quantized from those bf16 values with
    their Linear4bit state-dict entries, and config.json with its quantization_config. The
    nested code map is create_dynamic_map's, as bitsandbytes computes it. With
    `keep_16_bit`, the same bf16 model unquantized (the folder it was quantized from)."""
    os.makedirs(folder, exist_ok=True)
    nested_code = create_dynamic_map() if double_quant else None
    tensors = {}
    for name, tensor in read_safetensors(os.path.join(source, "model.safetensors")).items():
        values = torch.tensor(tensor.data, dtype=torch.float32).view(tensor.shape).to(torch.bfloat16)
        if keep_16_bit or not LAYER_LINEAR.fullmatch(name):
            tensors[name] = _to_tensor(values)
            continue
        packed, state = quantize_4bit(values, double_quant, nested_code)
        for key, value in linear4bit_tensors(name[: -len("weight")], packed, state).items():
            tensors[key] = _to_tensor(value)
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, metadata={"format": "pt"})
    with open(os.path.join(source, "config.json")) as f:
        config = json.load(f)
    config["torch_dtype"] = "bfloat16"
    if not keep_16_bit:
        config["quantization_config"] = {
            "quant_method": "bitsandbytes", "load_in_4bit": True, "load_in_8bit": False,
            "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": double_quant,
            "bnb_4bit_compute_dtype": "bfloat16", "bnb_4bit_quant_storage": "uint8",
            "llm_int8_skip_modules": None, "llm_int8_threshold": 6.0}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    write_parser = commands.add_parser("write", help="inputs, expected results and a bitsandbytes file")
    write_parser.add_argument("directory")
    write_parser.add_argument("--seed", type=int, default=0)
    compare_parser = commands.add_parser("compare", help="EXPECTED's tensors bit for bit in ACTUAL")
    compare_parser.add_argument("expected")
    compare_parser.add_argument("actual")
    compare_parser.add_argument("--inputs", help="also compare the absmax means with torch's")
    model_parser = commands.add_parser("quantize-model",
                                       help="a Llama-family SOURCE folder saved as a bitsandbytes 4-bit FOLDER")
    model_parser.add_argument("source")
    model_parser.add_argument("folder")
    model_parser.add_argument("--double-quant", action="store_true")
    model_parser.add_argument("--keep-16-bit", action="store_true",
                              help="the bf16 model unquantized, without a quantization_config")
    args = parser.parse_args(argv)
    if args.command == "quantize-model":
        quantize_model(args.source, args.folder, args.double_quant, args.keep_16_bit)
        return 0
    if args.command == "write":
        write(args.directory, args.seed)
        return 0
    status = compare(args.expected, args.actual)
    if args.inputs:
        status |= compare_means(args.inputs, args.actual)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
