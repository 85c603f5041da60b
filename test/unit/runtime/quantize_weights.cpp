// bertc's side of test/e2e/bnb-quant-parity.test: quantizes and dequantizes the weights the
// PyTorch reference (test/reference/bnb_quant.py) wrote, and dequantizes its bitsandbytes
// file, writing each result under the name the reference gives its own.
//   bertc_quantize_weights INPUTS BNB OUT
// INPUTS holds fp32 [rows, cols] weights, each with NAME.absmax_mean (torch's fp32 mean
// of its absmaxes, which the double quantization subtracts) and one nested_quant_map
// (bitsandbytes' map as torch computes it on this machine). For each weight OUT gets:
//   NAME.nf4.packed, .absmax             quantizeNf4
//   NAME.nf4.absmax_codes, .nested_absmax quantizeNf4Absmax with the reference's mean and map
//   NAME.nf4.absmax_mean                 nf4AbsmaxMean, bertc's own mean
//   NAME.int8.q (U8 bytes), .absmax      quantizeInt8Rows
//   NAME.{nf4,nf4_nested,int8}.DTYPE     each dequantized to float32, bfloat16 and float16
// and for each weight W of BNB, W.DTYPE: findBnb4bitWeight, readBnb4bitWeight,
// dequantizeNf4. 16-bit values are written widened to F32 (exactly).
#include "bertc/runtime/bnb_4bit_weight.h"
#include "bertc/runtime/cpu_quantized_weight.h"
#include "bertc/runtime/quantized_weight.h"

#include <cstring>
#include <deque>
#include <exception>
#include <iostream>

using namespace bertc;

namespace {

/// The tensors to write and the memory they point into.
class Outputs {
public:
  template <typename T>
  void add(const std::string &name, std::vector<int64_t> shape, std::vector<T> values,
           const std::string &dtype = "F32") {
    auto &kept = storage_.emplace_back(values.size() * sizeof(T));
    std::memcpy(kept.data(), values.data(), kept.size());
    tensors_.push_back({name, std::move(shape), kept.data(), dtype});
  }

  /// `weight` dequantized to fp32, bf16 and fp16, each as NAME.DTYPE.
  template <typename Dequantize>
  void addDequantized(const std::string &name, const std::vector<int64_t> &shape, int64_t n,
                      const Dequantize &dequantize) {
    add(name + ".float32", shape, dequantized<float>(n, dequantize));
    add(name + ".bfloat16", shape, dequantized<bf16>(n, dequantize));
    add(name + ".float16", shape, dequantized<fp16>(n, dequantize));
  }

  void write(const std::string &path) const { writeSafetensors(path, tensors_); }

private:
  template <typename T, typename Dequantize>
  static std::vector<float> dequantized(int64_t n, const Dequantize &dequantize) {
    std::vector<T> out(n);
    dequantize(out.data());
    std::vector<float> widened(n);
    for (int64_t i = 0; i < n; ++i)
      widened[i] = toFloat(out[i]);
    return widened;
  }

  std::deque<std::vector<unsigned char>> storage_;
  std::vector<TensorToWrite> tensors_;
};

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void quantizeInput(SafetensorsReader &inputs, const std::string &name,
                   const std::vector<float> &nestedMap, Outputs &outputs) {
  const std::vector<int64_t> shape = inputs.entries().at(name).shape;
  const int64_t rows = shape.at(0), cols = shape.at(1), n = rows * cols;
  const int64_t blocks = nf4Blocks(n), nestedBlocks = nf4NestedBlocks(n);
  std::vector<float> x(n), absmax(blocks), nestedAbsmax(nestedBlocks), mean(1);
  inputs.readF32(name, shape, x.data());
  inputs.readF32(name + ".absmax_mean", {1}, mean.data());
  std::vector<uint8_t> packed(nf4PackedBytes(n)), absmaxCodes(blocks);

  cpu::quantizeNf4(x.data(), n, packed.data(), absmax.data());
  cpu::quantizeNf4Absmax(absmax.data(), blocks, mean[0], nestedMap.data(), absmaxCodes.data(),
                         nestedAbsmax.data());
  outputs.add(name + ".nf4.packed", {int64_t(packed.size())}, packed, "U8");
  outputs.add(name + ".nf4.absmax", {blocks}, absmax);
  outputs.add(name + ".nf4.absmax_codes", {blocks}, absmaxCodes, "U8");
  outputs.add(name + ".nf4.nested_absmax", {nestedBlocks}, nestedAbsmax);
  outputs.add(name + ".nf4.absmax_mean", {1},
              std::vector<float>{cpu::nf4AbsmaxMean(absmax.data(), blocks)});
  const Nf4Weight plain{n,       packed.data(), absmax.data(),  nullptr,
                        nullptr, nullptr,       kNf4Map.data(), nullptr};
  const Nf4Weight nested{
      n,           packed.data(),  nullptr,         absmaxCodes.data(), nestedAbsmax.data(),
      mean.data(), kNf4Map.data(), nestedMap.data()};
  outputs.addDequantized(name + ".nf4", shape, n,
                         [&](auto *out) { cpu::dequantizeNf4(plain, out); });
  outputs.addDequantized(name + ".nf4_nested", shape, n,
                         [&](auto *out) { cpu::dequantizeNf4(nested, out); });

  std::vector<int8_t> q(n);
  std::vector<float> rowAbsmax(rows);
  cpu::quantizeInt8Rows(x.data(), rows, cols, q.data(), rowAbsmax.data());
  outputs.add(name + ".int8.q", shape, q, "U8"); // the int8 bits; the reference's are I8
  outputs.add(name + ".int8.absmax", {rows}, rowAbsmax);
  outputs.addDequantized(name + ".int8", shape, n, [&](auto *out) {
    cpu::dequantizeInt8Rows(q.data(), rowAbsmax.data(), out, rows, cols);
  });
}

void dequantizeBnbWeight(SafetensorsReader &bnb, const std::string &name, Outputs &outputs) {
  const Bnb4bitWeight weight = findBnb4bitWeight(bnb, name);
  std::vector<float> storage(weight.layout.bytes / sizeof(float));
  readBnb4bitWeight(bnb, name, weight, storage.data());
  const Nf4Weight parts = nf4WeightAt(storage.data(), weight.layout);
  outputs.addDequantized(name, weight.state.shape, parts.values,
                         [&](auto *out) { cpu::dequantizeNf4(parts, out); });
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::cerr << "usage: bertc_quantize_weights INPUTS BNB OUT\n";
    return 2;
  }
  try {
    SafetensorsReader inputs(argv[1]), bnb(argv[2]);
    std::vector<float> nestedMap(kNestedMapSize);
    inputs.readF32("nested_quant_map", {kNestedMapSize}, nestedMap.data());
    Outputs outputs;
    for (const auto &[name, entry] : inputs.entries())
      if (name != "nested_quant_map" && !endsWith(name, ".absmax_mean"))
        quantizeInput(inputs, name, nestedMap, outputs);
    const std::string stateSuffix = ".quant_state.bitsandbytes__nf4";
    for (const auto &[name, entry] : bnb.entries())
      if (endsWith(name, stateSuffix))
        dequantizeBnbWeight(bnb, name.substr(0, name.size() - stateSuffix.size()), outputs);
    outputs.write(argv[3]);
  } catch (const std::exception &error) {
    std::cerr << "bertc_quantize_weights: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
