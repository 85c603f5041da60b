// Warp matrix instructions whose fragments have a documented layout, for kernels that work
// on a product's elements in registers: mma.sync m16n8k16 (16-bit operands, fp32
// accumulators; bf16 from sm_80, fp16 from sm_75, where it is two m16n8k8 products) and
// ldmatrix .x4 (from sm_75), as PTX. The layouts (which lane holds which elements) are
// spelled out in the simulated device's stand-ins, bertc/cuda_sim/warp_matrix.h, which the
// simulated build uses instead. The functions are templates on the 16-bit type W
// (__nv_bfloat16 or __half), so a kernel that calls them only where kCompiledArch allows
// leaves older architectures' passes without them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#if defined(BERTC_CUDA_SIM)
#include "bertc/cuda_sim/warp_matrix.h"

namespace bertc::cuda::warp_matrix {
using sim::loadMatrixX4;
using sim::mmaM16N8K16;
using sim::mmaM16N8K8;
using sim::packPair;
} // namespace bertc::cuda::warp_matrix

#else

namespace bertc::cuda::warp_matrix {

/// d += a b for one m16n8k8 tile of fp16 (sm_75 and later): a 16 x 8, b 8 x 8 (k x n).
template <typename W>
__device__ __forceinline__ void mmaM16N8K8(float (&d)[4], const uint32_t (&a)[2], uint32_t b) {
  static_assert(std::is_same_v<W, __half>, "bertc uses m16n8k8 for fp16 on sm_75 only");
  asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(b));
}

/// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: four 8 x 8 matrices of shared memory,
/// lanes 8j .. 8j + 7 giving the addresses of matrix j's rows (`row`, 16-byte aligned).
/// volatile: it reads memory the compiler does not see, so it stays between the barriers.
template <bool Transposed, typename W>
__device__ __forceinline__ void loadMatrixX4(uint32_t (&r)[4], const W *row) {
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(row));
  if constexpr (Transposed)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

/// Two floats rounded to W, the first in the low half.
__device__ __forceinline__ uint32_t packPair(__nv_bfloat16, float low, float high) {
  const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
  return *reinterpret_cast<const uint32_t *>(&pair);
}
__device__ __forceinline__ uint32_t packPair(__half, float low, float high) {
  const __half2 pair = __floats2half2_rn(low, high);
  return *reinterpret_cast<const uint32_t *>(&pair);
}

} // namespace bertc::cuda::warp_matrix

#endif

namespace bertc::cuda::warp_matrix {

/// An m16n8k16 product as two m16n8k8 ones: in m16n8k16's layout, a[0], a[1] and b[0] hold
/// the first 8 of k as m16n8k8's a and b do, and a[2], a[3] and b[1] the last 8.
template <typename W>
__device__ __forceinline__ void mmaM16N8K16AsK8Pair(float (&d)[4], const uint32_t (&a)[4],
                                                    const uint32_t (&b)[2]) {
  mmaM16N8K8<W>(d, {a[0], a[1]}, b[0]);
  mmaM16N8K8<W>(d, {a[2], a[3]}, b[1]);
}

} // namespace bertc::cuda::warp_matrix

#if !defined(BERTC_CUDA_SIM)

namespace bertc::cuda::warp_matrix {

/// d += a b for one m16n8k16 tile: a 16 x 16 (row major), b 16 x 8 (k x n), d 16 x 8 fp32.
template <typename W>
__device__ __forceinline__ void mmaM16N8K16(float (&d)[4], const uint32_t (&a)[4],
                                            const uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<W, __nv_bfloat16>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
#if __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    mmaM16N8K16AsK8Pair<W>(d, a, b); // sm_75 has fp16's m16n8k8 only
#endif
  }
}

} // namespace bertc::cuda::warp_matrix

#endif
