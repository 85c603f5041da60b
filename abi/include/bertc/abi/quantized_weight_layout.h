// The bytes of a frozen weight stored quantized, for the planner, which sizes and places it,
// and for the kernels that read it (runtime/include/bertc/runtime/quantized_weight.h holds
// the numbers the codes stand for). Two formats, both bitsandbytes':
//   - NF4 (QLoRA): a 4-bit code per value, two a byte (the first value in the high nibble),
//     and an absmax per block of 64 values; with double quantization each absmax, less the
//     mean of them all, is itself an 8-bit code, with an fp32 absmax per 256 of those
//     codes. A tensor carries its own code maps (16 floats; 256 for the nested codes), as a
//     bitsandbytes checkpoint does, so a file's maps are used bit for bit.
//   - int8 rows (LLM.int8()): an int8 per value and an fp32 absmax per row.
// Each part starts at a multiple of kQuantizedPartAlignment from the tensor's first byte,
// and the whole takes a multiple of it, so a tensor placed at an aligned offset has every
// part aligned for vector loads and fp32 access.
//
//   n = 4096 x 4096    | bytes      | bits a value | parts (bytes)
//   NF4                |  9,437,248 | 4.500        | codes 8,388,608, absmax 1,048,576, map 64
//   NF4, double quant  |  8,655,952 | 4.127        | codes 8,388,608, absmax codes 262,144,
//                      |            |              | nested absmax 4,096, mean 16, maps 1,088
//   int8 rows          | 16,793,600 | 8.008        | values 16,777,216, absmax 16,384
#pragma once

#include <cstdint>

namespace bertc {

/// Values per NF4 block, each with its own absmax (bitsandbytes' QLoRA block size).
inline constexpr int64_t kNf4BlockSize = 64;
/// NF4 absmax codes per nested block, each with its own fp32 absmax.
inline constexpr int64_t kNf4NestedBlockSize = 256;
/// Entries of the NF4 map and of the nested absmaxes' map.
inline constexpr int64_t kNf4MapSize = 16;
inline constexpr int64_t kNestedMapSize = 256;
/// Where each part of a quantized tensor starts, relative to its first byte.
inline constexpr int64_t kQuantizedPartAlignment = 16;

inline constexpr int64_t alignQuantizedPart(int64_t bytes) {
  return (bytes + kQuantizedPartAlignment - 1) / kQuantizedPartAlignment * kQuantizedPartAlignment;
}

/// Bytes of the packed codes of n values (an odd n leaves the last low nibble unused).
inline constexpr int64_t nf4PackedBytes(int64_t values) { return (values + 1) / 2; }
/// NF4 blocks of n values, the last one possibly partial.
inline constexpr int64_t nf4Blocks(int64_t values) {
  return (values + kNf4BlockSize - 1) / kNf4BlockSize;
}
/// Nested blocks over the absmax codes of n values.
inline constexpr int64_t nf4NestedBlocks(int64_t values) {
  return (nf4Blocks(values) + kNf4NestedBlockSize - 1) / kNf4NestedBlockSize;
}

/// Byte offsets of an NF4 tensor's parts from its first byte; the packed codes are at 0. A
/// part the form lacks has offset -1.
struct Nf4Layout {
  int64_t values = 0;
  bool nested = false;
  int64_t absmaxOffset = -1;       ///< plain: fp32 [nf4Blocks]; nested: u8 codes [nf4Blocks]
  int64_t nestedAbsmaxOffset = -1; ///< nested: fp32 [nf4NestedBlocks]
  int64_t absmaxMeanOffset = -1;   ///< nested: fp32, the mean added back (bnb's nested_offset)
  int64_t quantMapOffset = -1;     ///< fp32 [16]
  int64_t nestedMapOffset = -1;    ///< nested: fp32 [256]
  int64_t bytes = 0;               ///< the whole, a multiple of kQuantizedPartAlignment
};

/// The layout of n values in NF4, with double quantization (`nested`) or without.
inline constexpr Nf4Layout nf4Layout(int64_t values, bool nested) {
  Nf4Layout layout;
  layout.values = values;
  layout.nested = nested;
  layout.absmaxOffset = alignQuantizedPart(nf4PackedBytes(values));
  if (!nested) {
    layout.quantMapOffset = alignQuantizedPart(layout.absmaxOffset + 4 * nf4Blocks(values));
    layout.bytes = layout.quantMapOffset + 4 * kNf4MapSize;
    return layout;
  }
  layout.nestedAbsmaxOffset = alignQuantizedPart(layout.absmaxOffset + nf4Blocks(values));
  layout.absmaxMeanOffset =
      alignQuantizedPart(layout.nestedAbsmaxOffset + 4 * nf4NestedBlocks(values));
  layout.quantMapOffset = alignQuantizedPart(layout.absmaxMeanOffset + 4);
  layout.nestedMapOffset = layout.quantMapOffset + 4 * kNf4MapSize;
  layout.bytes = layout.nestedMapOffset + 4 * kNestedMapSize;
  return layout;
}

/// Where an NF4 tensor's parts lie (in host or device memory); the nested form's pointers
/// are null in a plain tensor and `absmax` null in a nested one.
struct Nf4Weight {
  int64_t values;
  const uint8_t *packed;      ///< [nf4PackedBytes] code 2i in the high nibble of byte i
  const float *absmax;        ///< plain: [nf4Blocks]
  const uint8_t *absmaxCodes; ///< nested: [nf4Blocks] codes of absmax - mean in nestedMap
  const float *nestedAbsmax;  ///< nested: [nf4NestedBlocks]
  const float *absmaxMean;    ///< nested: [1]
  const float *quantMap;      ///< [16] the value of each 4-bit code
  const float *nestedMap;     ///< nested: [256] the value of each absmax code
};

/// The parts of the tensor of `layout` that starts at `base`.
inline Nf4Weight nf4WeightAt(const void *base, const Nf4Layout &layout) {
  const auto *bytes = static_cast<const uint8_t *>(base);
  auto floatsAt = [&](int64_t offset) {
    return offset < 0 ? nullptr : reinterpret_cast<const float *>(bytes + offset);
  };
  Nf4Weight weight{};
  weight.values = layout.values;
  weight.packed = bytes;
  weight.absmax = layout.nested ? nullptr : floatsAt(layout.absmaxOffset);
  weight.absmaxCodes = layout.nested ? bytes + layout.absmaxOffset : nullptr;
  weight.nestedAbsmax = floatsAt(layout.nestedAbsmaxOffset);
  weight.absmaxMean = floatsAt(layout.absmaxMeanOffset);
  weight.quantMap = floatsAt(layout.quantMapOffset);
  weight.nestedMap = floatsAt(layout.nestedMapOffset);
  return weight;
}

/// Byte offsets of an int8 row-quantized [rows, cols] tensor's parts: the int8 values
/// (row-major) at 0, then an fp32 absmax per row.
struct Int8RowsLayout {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t absmaxOffset = 0;
  int64_t bytes = 0; ///< a multiple of kQuantizedPartAlignment
};

inline constexpr Int8RowsLayout int8RowsLayout(int64_t rows, int64_t cols) {
  Int8RowsLayout layout;
  layout.rows = rows;
  layout.cols = cols;
  layout.absmaxOffset = alignQuantizedPart(rows * cols);
  layout.bytes = alignQuantizedPart(layout.absmaxOffset + 4 * rows);
  return layout;
}

} // namespace bertc
