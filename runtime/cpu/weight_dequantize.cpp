// Dequantizing frozen weights on the CPU (quantized_weight.h): NF4, plain or double
// quantized, and int8 rows, into fp32, bf16 or fp16, blocks (rows) spread over the threads.
// Each value is one fp32 product rounded once to the storage type; the CUDA twins
// (cuda/weight_dequantize.cu) compute the same products.
#include "bertc/runtime/cpu_quantized_weight.h"
#include "bertc/runtime/quantized_weight.h"

#include "parallel.h"
#include "storage_types.h"

#include <algorithm>

namespace bertc::cpu {

namespace {
/// Blocks of 64 values one chunk of the threads' loop covers.
constexpr int64_t kBlocksPerChunk = kElementwiseChunk / kNf4BlockSize;

/// The absmax of NF4 block `block`: stored, or decoded from its nested code.
float blockAbsmax(const Nf4Weight &weight, int64_t block) {
  if (!weight.absmaxCodes)
    return weight.absmax[block];
  const float scaled = weight.nestedMap[weight.absmaxCodes[block]] *
                       weight.nestedAbsmax[block / kNf4NestedBlockSize];
  return scaled + *weight.absmaxMean;
}
} // namespace

template <typename T> void dequantizeNf4(const Nf4Weight &weight, T *out) {
  const int64_t n = weight.values;
  forEachChunk(nf4Blocks(n), kBlocksPerChunk, [&](int64_t firstBlock, int64_t endBlock) {
    for (int64_t block = firstBlock; block < endBlock; ++block) {
      const float absmax = blockAbsmax(weight, block);
      const int64_t begin = block * kNf4BlockSize;
      const int64_t end = std::min(n, begin + kNf4BlockSize);
      for (int64_t i = begin; i < end; ++i) {
        const uint8_t byte = weight.packed[i / 2];
        const uint8_t code = i % 2 == 0 ? firstNf4Code(byte) : secondNf4Code(byte);
        out[i] = fromFloat<T>(weight.quantMap[code] * absmax);
      }
    }
  });
}

template <typename T>
void dequantizeInt8Rows(const int8_t *q, const float *absmax, T *out, int64_t rows, int64_t cols) {
  forEachChunk(rows, std::max<int64_t>(1, kElementwiseChunk / std::max<int64_t>(1, cols)),
               [&](int64_t firstRow, int64_t endRow) {
                 for (int64_t r = firstRow; r < endRow; ++r) {
                   const float scale = int8DequantizeScale(absmax[r]);
                   for (int64_t c = r * cols; c < (r + 1) * cols; ++c)
                     out[c] = fromFloat<T>(float(q[c]) * scale);
                 }
               });
}

#define INSTANTIATE_DEQUANTIZE(T)                                                                  \
  template void dequantizeNf4(const Nf4Weight &, T *);                                             \
  template void dequantizeInt8Rows(const int8_t *, const float *, T *, int64_t, int64_t);
BERTC_FOR_EACH_STORAGE_TYPE(INSTANTIATE_DEQUANTIZE)
#undef INSTANTIATE_DEQUANTIZE

} // namespace bertc::cpu
