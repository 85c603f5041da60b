// The 8-bit AdamW state of one parameter, as bitsandbytes' Adam8bit keeps it (blockwise
// dynamic quantization): each moment is one uint8 code per element, an index into a
// 256-value map (runtime/include/bertc/runtime/dynamic_map.h; signed for m, unsigned for
// v), and one fp32 absmax per block of blockSize elements; an element's moment is
// map[code] * absmax of its block. Defined here for the planner, which sizes and places
// the state, and for the kernels that update it (adamw8bitUpdate in cpu_kernels.h and
// cuda_kernels.h). A zeroed state (codes and absmax) is AdamW's initial, all-zero one.
//
// State bytes of a parameter of n values (its moments m and v; the fp32 master of a
// 16-bit parameter and the gradient are the same either way):
//
//   | state       | bytes                              | per value, n = 768 x 3072        |
//   |-------------|------------------------------------|----------------------------------|
//   | fp32        | 8 n                                | 8 B (18,874,368 B)               |
//   | 8-bit, 2048 | 2 n + 8 ceil(n / 2048) (absmaxes)  | 2.0039 B (4,727,808 B)           |
//   | 8-bit, 256  | 2 n + 8 ceil(n / 256)              | 2.0313 B (4,792,320 B)           |
//
// bitsandbytes keeps parameters of fewer than 4096 values (its min_8bit_size) in fp32
// state, where the absmaxes would weigh most and the saving is small; which parameters get
// 8-bit state is the planner's choice. So chosen, BERT-base with a 2-label head (108,311,810
// values, 125,186 of them in parameters below 4096) keeps 866,494,480 B of fp32 moments, or
// 217,797,344 B with 8-bit blocks of 2048 (2.011 B per value), 220,755,568 B with 256.
#pragma once

#include <cstdint>

namespace bertc {

/// Elements per quantization block, each with its own absmax: bitsandbytes' two sizes
/// (2048, quantize_blockwise's default and its 8-bit optimizers' first block; 256, the
/// block of its current blockwise optimizers).
enum class QuantBlockSize : int32_t { k256 = 256, k2048 = 2048 };

/// Fewest values a parameter must have for 8-bit state (bitsandbytes' min_8bit_size);
/// smaller ones keep fp32 moments.
inline constexpr int64_t kMin8bitStateValues = 4096;

/// Quantization blocks of a parameter of `count` values (the last one may be partial).
inline int64_t quantBlockCount(int64_t count, QuantBlockSize blockSize) {
  const int64_t size = int64_t(blockSize);
  return (count + size - 1) / size;
}

/// Bytes of a parameter's 8-bit AdamW state: two codes per value and two fp32 absmaxes
/// per block.
inline int64_t adamw8bitStateBytes(int64_t count, QuantBlockSize blockSize) {
  return 2 * count + 2 * int64_t(sizeof(float)) * quantBlockCount(count, blockSize);
}

/// Where one parameter's 8-bit AdamW state lies; the four arrays may be anywhere (in an
/// arena: the codes need no alignment, the absmaxes a float's).
struct AdamW8bitState {
  uint8_t *mCodes; ///< [count] first moment, codes of the signed dynamic map
  uint8_t *vCodes; ///< [count] second moment, codes of the unsigned dynamic map
  float *mAbsmax;  ///< [quantBlockCount] largest |m| of each block
  float *vAbsmax;  ///< [quantBlockCount] largest v of each block
};

} // namespace bertc
