// The simulated device's stand-ins for the warp matrix instructions bertc's kernels issue as
// PTX (runtime/cuda/warp_matrix.cuh): mma.sync m16n8k16 (and sm_75's m16n8k8) with 16-bit
// operands and fp32 accumulators, and ldmatrix .x4, plain and transposed. Their fragments
// have a documented layout (PTX ISA: "Matrix Fragments for mma.m16n8k16 with floating point
// type", "ldmatrix"), which the kernels rely on, so each stand-in computes exactly what that
// layout makes of every lane's registers. Lane l is in row group g = l / 4 and holds column
// pair t = l % 4; a 32-bit register holds two 16-bit values, the lower index in the low half:
//   A (16 x 16, row major)  a[0] = (g, 2t..2t+1)     a[1] = (g + 8, 2t..)
//                           a[2] = (g, 2t + 8..)     a[3] = (g + 8, 2t + 8..)
//   B (16 x 8, k x n)       b[0] = (2t..2t+1, g)     b[1] = (2t + 8.., g)
//   C, D (16 x 8, fp32)     d[0], d[1] = (g, 2t), (g, 2t + 1)   d[2], d[3] = (g + 8, ...)
// ldmatrix .x4 loads four 8 x 8 matrices of 16-bit values, lanes 8j .. 8j + 7 giving the
// addresses of matrix j's rows (16 bytes each, 16-byte aligned); register j of lane l gets
// row l / 4, columns 2 (l % 4) .. + 1 of matrix j, or with .trans rows 2 (l % 4) .. + 1 of
// column l / 4.
// Each is a warp collective: the lanes publish their registers in a per-warp exchange area,
// sync, and each computes its own results from the others'. The area and the products are
// left out of the memory checkers' instrumentation (registers on a GPU); ldmatrix's reads
// of the kernel's shared memory are checked as the kernel's own.
#pragma once

#include "bertc/cuda_sim/device_code.h"
#include "bertc/cuda_sim/matrix_load_counts.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace bertc::sim {

/// Checks that an ldmatrix row address is 16-byte aligned, as the instruction requires; a
/// misaligned one faults the device with cudaErrorMisalignedAddress (src/warp_matrix.cpp).
bool matrixRowAligned(const char *function, const void *row);

/// Adds one warp's ldmatrix .x4 to the counts, from the 32 row addresses its lanes gave.
void countMatrixLoad(const uint16_t *const (&rows)[32]);

namespace warp_matrix {

inline float operandValue(__nv_bfloat16, uint16_t bits) { return bfloat16BitsToFloat(bits); }
inline float operandValue(__half, uint16_t bits) { return halfBitsToFloat(bits); }

/// The 16-bit value `half` (0: low) of a register, as float.
template <typename W> float registerValue(uint32_t word, int half) {
  return operandValue(W{}, uint16_t(half ? word >> 16 : word & 0xffffu));
}

/// The calling thread's index in its block.
inline unsigned blockThread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

/// A warp collective: every lane passes Words words and gets all 32 lanes' (row = lane),
/// valid until the warp's next exchange.
template <int Words>
__attribute__((no_sanitize("kernel-address"))) inline const uint32_t (
    *exchange(const uint32_t (&mine)[Words]))[Words] {
  constexpr int kMaxWarps = 32;
  __shared__ uint32_t area[kMaxWarps][32][Words];
  const unsigned thread = blockThread();
  uint32_t(*lanes)[Words] = area[thread / 32];
  syncWarp(0xffffffffu); // every lane is done with the previous exchange
  for (int w = 0; w < Words; ++w)
    lanes[thread % 32][w] = mine[w];
  syncWarp(0xffffffffu);
  return lanes;
}

inline unsigned laneIndex() { return blockThread() % 32; }

/// The row address lane `source` published in an exchange.
__attribute__((no_sanitize("kernel-address"))) inline const uint16_t *
publishedRow(const uint32_t (*lanes)[2], int source) {
  return reinterpret_cast<const uint16_t *>(uintptr_t(lanes[source][0]) |
                                            uintptr_t(uint64_t(lanes[source][1]) << 32));
}

} // namespace warp_matrix

/// d += a b for one m16n8k16 tile: the 16-bit operands widened to float (each product
/// exact) and each element summed in float from d's, one rounding per add, in k order.
template <typename W>
__attribute__((no_sanitize("kernel-address"))) inline void
mmaM16N8K16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  using warp_matrix::registerValue;
  const uint32_t mine[6] = {a[0], a[1], a[2], a[3], b[0], b[1]};
  const uint32_t(*lanes)[6] = warp_matrix::exchange(mine);
  const int lane = int(warp_matrix::laneIndex()), g = lane / 4, t = lane % 4;
  // A(r, k) is in lane 4 (r % 8) + (k % 8) / 2, register r / 8 + 2 (k / 8); B(k, n) in lane
  // 4 n + (k % 8) / 2, register 4 + k / 8; half k % 2 of either.
  for (int e = 0; e < 4; ++e) {
    const int r = g + 8 * (e / 2), n = 2 * t + e % 2;
    float sum = d[e];
    for (int k = 0; k < 16; ++k)
      sum += registerValue<W>(lanes[4 * (r % 8) + (k % 8) / 2][r / 8 + 2 * (k / 8)], k % 2) *
             registerValue<W>(lanes[4 * n + (k % 8) / 2][4 + k / 8], k % 2);
    d[e] = sum;
  }
}

/// d += a b for one m16n8k8 tile (sm_75's fp16 shape): A 16 x 8 with a[0] = (g, 2t..2t+1)
/// and a[1] = (g + 8, 2t..), B 8 x 8 with b = (2t..2t+1, g), C and D as m16n8k16's. Summed
/// as mmaM16N8K16 sums.
template <typename W>
__attribute__((no_sanitize("kernel-address"))) inline void
mmaM16N8K8(float (&d)[4], const uint32_t (&a)[2], uint32_t b) {
  using warp_matrix::registerValue;
  const uint32_t mine[3] = {a[0], a[1], b};
  const uint32_t(*lanes)[3] = warp_matrix::exchange(mine);
  const int lane = int(warp_matrix::laneIndex()), g = lane / 4, t = lane % 4;
  // A(r, k) is in lane 4 (r % 8) + k / 2, register r / 8; B(k, n) in lane 4 n + k / 2,
  // register 2; half k % 2 of either.
  for (int e = 0; e < 4; ++e) {
    const int r = g + 8 * (e / 2), n = 2 * t + e % 2;
    float sum = d[e];
    for (int k = 0; k < 8; ++k)
      sum += registerValue<W>(lanes[4 * (r % 8) + k / 2][r / 8], k % 2) *
             registerValue<W>(lanes[4 * n + k / 2][2], k % 2);
    d[e] = sum;
  }
}

/// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 with the calling lane's row address `row`.
template <bool Transposed, typename W> inline void loadMatrixX4(uint32_t (&r)[4], const W *row) {
  static_assert(sizeof(W) == 2, "ldmatrix loads 16-bit values");
  const uintptr_t address = reinterpret_cast<uintptr_t>(row);
  const uint32_t mine[2] = {uint32_t(address), uint32_t(uint64_t(address) >> 32)};
  const uint32_t(*lanes)[2] = warp_matrix::exchange(mine);
  if (!matrixRowAligned(Transposed ? "ldmatrix .trans" : "ldmatrix", row))
    return;
  const int lane = int(warp_matrix::laneIndex());
  const auto rowOf = [&](int source) { return warp_matrix::publishedRow(lanes, source); };
  if (lane == 0) {
    const uint16_t *rows[32];
    for (int source = 0; source < 32; ++source)
      rows[source] = rowOf(source);
    countMatrixLoad(rows);
  }
  for (int j = 0; j < 4; ++j) {
    uint16_t low, high;
    if constexpr (Transposed) {
      low = rowOf(8 * j + 2 * (lane % 4))[lane / 4];
      high = rowOf(8 * j + 2 * (lane % 4) + 1)[lane / 4];
    } else {
      low = rowOf(8 * j + lane / 4)[2 * (lane % 4)];
      high = rowOf(8 * j + lane / 4)[2 * (lane % 4) + 1];
    }
    r[j] = uint32_t(low) | uint32_t(high) << 16;
  }
}

/// Two floats rounded to W, the first in the low half (cvt.rn.bf16x2.f32 / .f16x2).
inline uint32_t packPair(__nv_bfloat16, float low, float high) {
  return uint32_t(floatToBfloat16Bits(low)) | uint32_t(floatToBfloat16Bits(high)) << 16;
}
inline uint32_t packPair(__half, float low, float high) {
  return uint32_t(floatToHalfBits(low)) | uint32_t(floatToHalfBits(high)) << 16;
}

} // namespace bertc::sim
