// Quantizing frozen weights on the CPU as bitsandbytes does (quantized_weight.h): NF4 in
// blocks of 64 with an optional double quantization of the absmaxes, and int8 rows. A block
// (a row) is quantized on its own, so the blocks are spread over the threads (parallel.h).
#include "bertc/runtime/cpu_quantized_weight.h"
#include "bertc/runtime/quantized_weight.h"

#include "parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace bertc::cpu {

namespace {
/// Blocks of 64 values one chunk of the threads' loop covers.
constexpr int64_t kBlocksPerChunk = kElementwiseChunk / kNf4BlockSize;

float largestMagnitude(const float *x, int64_t count) {
  float largest = 0.0f;
  for (int64_t i = 0; i < count; ++i)
    largest = std::fmax(largest, std::fabs(x[i]));
  return largest;
}
} // namespace

void quantizeNf4(const float *x, int64_t n, uint8_t *packed, float *absmax) {
  forEachChunk(nf4Blocks(n), kBlocksPerChunk, [&](int64_t firstBlock, int64_t endBlock) {
    for (int64_t block = firstBlock; block < endBlock; ++block) {
      const int64_t begin = block * kNf4BlockSize;
      const int64_t end = std::min(n, begin + kNf4BlockSize);
      absmax[block] = largestMagnitude(x + begin, end - begin);
      const float scale = blockScale(absmax[block]);
      // A block starts at an even value, so its values pair up from its first; only the
      // tensor's last block can end on an unpaired value, paired with a 0.
      for (int64_t i = begin; i < end; i += 2) {
        const float second = i + 1 < end ? x[i + 1] : 0.0f;
        packed[i / 2] = packNf4(nf4Code(x[i] * scale), nf4Code(second * scale));
      }
    }
  });
}

float nf4AbsmaxMean(const float *absmax, int64_t blocks) {
  double sum = 0.0;
  for (int64_t b = 0; b < blocks; ++b)
    sum += double(absmax[b]);
  return blocks > 0 ? float(sum / double(blocks)) : 0.0f;
}

void quantizeNf4Absmax(const float *absmax, int64_t blocks, float mean, const float *nestedMap,
                       uint8_t *absmaxCodes, float *nestedAbsmax) {
  for (int64_t nested = 0, begin = 0; begin < blocks; ++nested, begin += kNf4NestedBlockSize) {
    const int64_t end = std::min(blocks, begin + kNf4NestedBlockSize);
    float centred[kNf4NestedBlockSize];
    for (int64_t b = begin; b < end; ++b)
      centred[b - begin] = absmax[b] - mean;
    nestedAbsmax[nested] = largestMagnitude(centred, end - begin);
    const float scale = blockScale(nestedAbsmax[nested]);
    for (int64_t b = begin; b < end; ++b)
      absmaxCodes[b] = blockwiseCode(nestedMap, centred[b - begin] * scale);
  }
}

void quantizeNf4Weight(const float *x, const Nf4Layout &layout, void *base, float *absmaxScratch) {
  auto *bytes = static_cast<uint8_t *>(base);
  auto floatsAt = [&](int64_t offset) { return reinterpret_cast<float *>(bytes + offset); };
  const int64_t blocks = nf4Blocks(layout.values);
  std::memcpy(floatsAt(layout.quantMapOffset), kNf4Map.data(), sizeof kNf4Map);
  if (!layout.nested) {
    quantizeNf4(x, layout.values, bytes, floatsAt(layout.absmaxOffset));
    return;
  }
  quantizeNf4(x, layout.values, bytes, absmaxScratch);
  const float mean = nf4AbsmaxMean(absmaxScratch, blocks);
  *floatsAt(layout.absmaxMeanOffset) = mean;
  std::memcpy(floatsAt(layout.nestedMapOffset), kDefaultNestedMap.data(), sizeof kDefaultNestedMap);
  quantizeNf4Absmax(absmaxScratch, blocks, mean, kDefaultNestedMap.data(),
                    bytes + layout.absmaxOffset, floatsAt(layout.nestedAbsmaxOffset));
}

void quantizeInt8Rows(const float *x, int64_t rows, int64_t cols, int8_t *q, float *absmax) {
  forEachChunk(rows, std::max<int64_t>(1, kElementwiseChunk / std::max<int64_t>(1, cols)),
               [&](int64_t firstRow, int64_t endRow) {
                 for (int64_t r = firstRow; r < endRow; ++r) {
                   const float *row = x + r * cols;
                   absmax[r] = largestMagnitude(row, cols);
                   const float scale = int8QuantizeScale(absmax[r]);
                   for (int64_t c = 0; c < cols; ++c) {
                     // 0 * inf in a row of zeros: NaN, which bitsandbytes' GPUs round to 0.
                     const float scaled = row[c] * scale;
                     q[r * cols + c] = std::isnan(scaled) ? 0 : int8_t(std::nearbyint(scaled));
                   }
                 }
               });
}

} // namespace bertc::cpu
