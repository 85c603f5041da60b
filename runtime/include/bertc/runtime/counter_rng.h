// Counter-based random numbers for bertc: a pure function of their key and counter, so a
// dropout mask can be regenerated exactly in the backward pass or after recomputation,
// on CPU and GPU alike, without ever being stored. Philox4x32-10 (Salmon et al., SC'11).
#pragma once

#include <cmath>
#include <cstdint>

#include "bertc/runtime/host_device.h"

namespace bertc {

/// The four 32-bit output words of one Philox4x32-10 call.
struct PhiloxBlock {
  uint32_t words[4];
};

/// Philox4x32-10 on counter (ctr0..ctr3) with key (key0, key1).
BERTC_HOST_DEVICE inline PhiloxBlock philox4x32Block(uint32_t ctr0, uint32_t ctr1, uint32_t ctr2,
                                                     uint32_t ctr3, uint32_t key0, uint32_t key1) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(kMul0) * ctr0;
    uint64_t p1 = uint64_t(kMul1) * ctr2;
    uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    uint32_t n0 = hi1 ^ ctr1 ^ key0, n2 = hi0 ^ ctr3 ^ key1;
    ctr0 = n0;
    ctr1 = lo1;
    ctr2 = n2;
    ctr3 = lo0;
    key0 += kWeyl0;
    key1 += kWeyl1;
  }
  return {{ctr0, ctr1, ctr2, ctr3}};
}

/// The first output word of Philox4x32-10 on counter (ctr0..ctr3) with key (key0, key1).
BERTC_HOST_DEVICE inline uint32_t philox4x32(uint32_t ctr0, uint32_t ctr1, uint32_t ctr2,
                                             uint32_t ctr3, uint32_t key0, uint32_t key1) {
  return philox4x32Block(ctr0, ctr1, ctr2, ctr3, key0, key1).words[0];
}

/// The top 24 bits of `bits` as a uniform float in [0, 1).
BERTC_HOST_DEVICE inline float unitFloat(uint32_t bits) {
  return float(bits >> 8) * (1.0f / 16777216.0f);
}

/// A uniform float in [0, 1) for element `index` of random stream `stream` at `step`.
BERTC_HOST_DEVICE inline float counterUniform(uint64_t seed, uint64_t step, uint32_t stream,
                                              uint64_t index) {
  uint32_t bits = philox4x32(uint32_t(index), uint32_t(index >> 32), uint32_t(step), stream,
                             uint32_t(seed), uint32_t(seed >> 32));
  return unitFloat(bits);
}

/// What a dropout mask depends on besides the element. The mask is a pure function of
/// (seed, step, stream, row of the effective batch, index within the row): the backward
/// and a recomputed forward regenerate it, and an effective batch gets the same masks
/// however it is split into micro-batches.
struct DropoutKey {
  uint64_t seed;
  uint64_t step;    ///< 1-based optimizer step
  uint32_t stream;  ///< the dropout op's stream
  int64_t firstRow; ///< the micro-batch's first row within the effective batch
};

/// Elements of a row drawn by one Philox call: group g is elements 8g .. 8g + 7.
constexpr int kDropoutGroupSize = 8;

/// The 16-bit draws below which dropout at `rate` drops an element: ceil(rate * 2^16), so
/// that an element is dropped with probability rate rounded up to a multiple of 2^-16
/// (0.1: 0.1000061).
BERTC_HOST_DEVICE inline uint32_t dropoutThreshold(float rate) {
  return uint32_t(ceilf(rate * 65536.0f)); // exact: a float times a power of two
}

/// Bit k (k < 8) says whether dropout keeps element 8 * group + k of the micro-batch's row
/// `row` (probability 1 - rate each): half k % 2 (the low half first) of word k / 2 of the
/// Philox call on counter (group, row of the effective batch, step, stream) with the seed
/// as key, at least dropoutThreshold(rate). A call's four words give eight decisions, which
/// halves the integer work of every dropout mask against a word per decision.
BERTC_HOST_DEVICE inline uint32_t dropoutKeepGroup(const DropoutKey &key, int64_t row,
                                                   uint64_t group, float rate) {
  const PhiloxBlock draw =
      philox4x32Block(uint32_t(group), uint32_t(key.firstRow + row), uint32_t(key.step), key.stream,
                      uint32_t(key.seed), uint32_t(key.seed >> 32));
  const uint32_t threshold = dropoutThreshold(rate);
  uint32_t kept = 0;
  for (int k = 0; k < kDropoutGroupSize; ++k)
    kept |= uint32_t(((draw.words[k / 2] >> (16 * (k % 2))) & 0xffffu) >= threshold) << k;
  return kept;
}

/// The attention dropout's stride: probability (i, j) of head h is element
/// (h * kAttentionDropoutSeq + i) * kAttentionDropoutSeq + j of its batch row, whatever
/// length the micro-batch is padded to, so that a row's masks do not depend on the rows it
/// shares a micro-batch with. bertc's longest seq_len; with at most kAttentionDropoutHeads
/// heads a row's groups stay below 2^31, within Philox's 32-bit counter word.
constexpr int64_t kAttentionDropoutSeq = 8192;
constexpr int64_t kAttentionDropoutHeads = 256;

/// The dropout index of attention probability (i, j) of head h within its batch row.
BERTC_HOST_DEVICE inline uint64_t attentionDropoutIndex(int64_t h, int64_t i, int64_t j) {
  return uint64_t((h * kAttentionDropoutSeq + i) * kAttentionDropoutSeq + j);
}

/// Whether dropout keeps element `indexInRow` of the micro-batch's row `row`.
BERTC_HOST_DEVICE inline bool dropoutKeep(const DropoutKey &key, int64_t row, uint64_t indexInRow,
                                          float rate) {
  return (dropoutKeepGroup(key, row, indexInRow / kDropoutGroupSize, rate) >>
          (indexInRow % kDropoutGroupSize)) &
         1u;
}

} // namespace bertc
