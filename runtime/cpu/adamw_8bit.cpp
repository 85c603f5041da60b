// 8-bit AdamW on the CPU: bitsandbytes' Adam8bit with blockwise quantization, on the state
// of abi/adamw_8bit_state.h. Per quantization block:
//   1. dequantize both moments: m = signedMap[code] * absmax, v = unsignedMap[code] * absmax;
//   2. run adamwUpdate (optimizer.cpp, torch.optim.AdamW's fp32 operations) on them and the
//      parameter, which takes the unquantized new moments (and rewrites the block of a
//      16-bit parameter's working copy);
//   3. the block's new absmaxes: the largest |m| and the largest v;
//   4. requantize: each moment divided by its absmax (0 in an all-zero block) is encoded
//      by its nearest code (dynamic_map.h).
// The CUDA twin (cuda/adamw_8bit.cu) gives the same bits.
#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/dynamic_map.h"

#include <algorithm>
#include <cmath>

namespace bertc::cpu {

namespace {
constexpr std::array<float, kDynamicMapSize> kSignedMap = dynamicMap(DynamicMapKind::Signed);
constexpr std::array<float, kDynamicMapSize> kUnsignedMap = dynamicMap(DynamicMapKind::Unsigned);

/// The code of x in a block whose absmax is `absmax`.
uint8_t quantize(const std::array<float, kDynamicMapSize> &map, float x, float absmax) {
  return nearestCode(map.data(), absmax > 0.0f ? x / absmax : 0.0f);
}

/// The update of n values, a block at a time; `working`, if not null, gets each updated
/// value rounded to T.
template <typename T>
void update8bit(float *param, const float *grad, const AdamW8bitState &state, T *working, int64_t n,
                QuantBlockSize blockSize, const AdamWConfig &config) {
  constexpr int64_t kMaxBlock = int64_t(QuantBlockSize::k2048);
  float m[kMaxBlock], v[kMaxBlock];
  const int64_t size = int64_t(blockSize);
  for (int64_t block = 0, begin = 0; begin < n; ++block, begin += size) {
    const int64_t count = std::min(size, n - begin);
    uint8_t *mCodes = state.mCodes + begin, *vCodes = state.vCodes + begin;
    for (int64_t i = 0; i < count; ++i) {
      m[i] = kSignedMap[mCodes[i]] * state.mAbsmax[block];
      v[i] = kUnsignedMap[vCodes[i]] * state.vAbsmax[block];
    }
    if (working)
      adamwUpdate(param + begin, grad + begin, m, v, working + begin, count, config);
    else
      adamwUpdate(param + begin, grad + begin, m, v, count, config);
    float mAbsmax = 0.0f, vAbsmax = 0.0f;
    for (int64_t i = 0; i < count; ++i) {
      mAbsmax = std::fmax(mAbsmax, std::fabs(m[i]));
      vAbsmax = std::fmax(vAbsmax, v[i]);
    }
    for (int64_t i = 0; i < count; ++i) {
      mCodes[i] = quantize(kSignedMap, m[i], mAbsmax);
      vCodes[i] = quantize(kUnsignedMap, v[i], vAbsmax);
    }
    state.mAbsmax[block] = mAbsmax;
    state.vAbsmax[block] = vAbsmax;
  }
}
} // namespace

void adamw8bitUpdate(float *param, const float *grad, const AdamW8bitState &state, int64_t n,
                     QuantBlockSize blockSize, const AdamWConfig &config) {
  update8bit(param, grad, state, static_cast<bf16 *>(nullptr), n, blockSize, config);
}

void adamw8bitUpdate(float *master, const float *grad, const AdamW8bitState &state, bf16 *working,
                     int64_t n, QuantBlockSize blockSize, const AdamWConfig &config) {
  update8bit(master, grad, state, working, n, blockSize, config);
}

void adamw8bitUpdate(float *master, const float *grad, const AdamW8bitState &state, fp16 *working,
                     int64_t n, QuantBlockSize blockSize, const AdamWConfig &config) {
  update8bit(master, grad, state, working, n, blockSize, config);
}

} // namespace bertc::cpu
