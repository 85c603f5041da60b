// What nvcc gives device code, for the host compiler: the CUDA keywords, the thread's
// coordinates, the block- and warp-wide synchronizing functions, the memory operations
// across blocks (an atomic add, the fence, an L1-bypassing load) and the math intrinsics.
// A kernel runs as one fiber per thread (src/block_scheduler.cpp); the blocks of a launch
// run one after another on one host thread, so a `__shared__` variable is a static
// thread_local that every thread of the running block sees (thread_local keeps the shared
// variables together where the checkers find them, src/shared_section.h).
// The checkers see the accesses the compiler instruments, and GCC leaves out those it can
// prove in bounds of a thread_local: a scalar __shared__ variable, or an element of a
// __shared__ array at a constant index (sums[0]), is read and written unchecked. An index
// computed at run time (staged[threadIdx.x]) is checked.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <math.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static thread_local

struct uint3 {
  unsigned x, y, z;
};
struct __align__(16) float4 {
  float x, y, z, w;
};

namespace bertc::sim {

/// The coordinates of the running thread, its block, and the launch.
struct ThreadCoordinates {
  uint3 thread, block;
  dim3 blockSize, gridSize;
};

/// The coordinates of the thread running now; only valid inside a kernel.
const ThreadCoordinates &currentThread();

/// The collectives a thread waits in; each returns once every participant has arrived.
void syncThreads();
int syncThreadsCount(int predicate);
uint64_t shuffleXor(unsigned mask, uint64_t bits, int laneMask, int width);
unsigned ballot(unsigned mask, int predicate);
void syncWarp(unsigned mask);

/// The atomics: each returns the word's old value.
unsigned atomicAddWord(unsigned *address, unsigned value);
unsigned atomicExchangeWord(unsigned *address, unsigned value);

template <typename T> uint64_t toBits(T value) {
  static_assert(sizeof(T) <= sizeof(uint64_t));
  uint64_t bits = 0;
  __builtin_memcpy(&bits, &value, sizeof value);
  return bits;
}
template <typename T> T fromBits(uint64_t bits) {
  T value;
  __builtin_memcpy(&value, &bits, sizeof value);
  return value;
}

} // namespace bertc::sim

#define threadIdx (::bertc::sim::currentThread().thread)
#define blockIdx (::bertc::sim::currentThread().block)
#define blockDim (::bertc::sim::currentThread().blockSize)
#define gridDim (::bertc::sim::currentThread().gridSize)
constexpr int warpSize = 32;

inline void __syncthreads() { bertc::sim::syncThreads(); }
inline int __syncthreads_count(int predicate) { return bertc::sim::syncThreadsCount(predicate); }
inline int __syncthreads_or(int predicate) { return bertc::sim::syncThreadsCount(predicate) != 0; }
inline int __syncthreads_and(int predicate) {
  return bertc::sim::syncThreadsCount(!predicate) == 0;
}
inline void __syncwarp(unsigned mask = 0xffffffffu) { bertc::sim::syncWarp(mask); }
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return bertc::sim::ballot(mask, predicate);
}
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T value, int laneMask, int width = warpSize) {
  return bertc::sim::fromBits<T>(
      bertc::sim::shuffleXor(mask, bertc::sim::toBits(value), laneMask, width));
}

// Memory operations across blocks. The blocks of a launch run one after another and a
// thread runs until it waits in a collective, so a read-modify-write is atomic as written
// and every write is already visible to every later read. The atomics are checked for
// bounds but, unlike plain writes, may come from every block (src/atomics.cpp).
inline unsigned atomicAdd(unsigned *address, unsigned value) {
  return bertc::sim::atomicAddWord(address, value);
}
inline unsigned atomicExch(unsigned *address, unsigned value) {
  return bertc::sim::atomicExchangeWord(address, value);
}
inline int atomicExch(int *address, int value) {
  return int(
      bertc::sim::atomicExchangeWord(reinterpret_cast<unsigned *>(address), unsigned(value)));
}
inline void __threadfence() {}
template <typename T> inline T __ldcg(const T *address) { return *address; }

// Rounded arithmetic: the host computes each in one IEEE operation (the simulated build
// is compiled with -ffp-contract=off, so nothing is fused behind these).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __expf(float a) { return expf(a); }
inline float __logf(float a) { return logf(a); }
inline float rsqrtf(float a) { return 1.0f / sqrtf(a); }
inline int __ffs(int value) { return __builtin_ffs(value); }
inline int __popc(unsigned value) { return __builtin_popcount(value); }
