// 8-bit AdamW on the GPU: bitsandbytes' Adam8bit with blockwise quantization, on the state
// of abi/adamw_8bit_state.h, one launch per parameter (an update in the backward) or per
// group of up to kGroupSize parameters (the optimizer step's, their blocks one after
// another), and one thread block per quantization block (as bitsandbytes'
// kOptimizerStatic8bit2StateBlockwise), each thread owning blockSize / 256 values. A
// thread block:
//   1. builds both dynamic maps in shared memory (dynamicMapValue, one entry of each per
//      thread);
//   2. dequantizes its values' moments and runs adamwElement (adamw_element.cuh, the CPU
//      twin's fp32 AdamW) on them and the parameter, keeping the new moments in registers
//      (and rounds each new value into the 16-bit working copy, where there is one);
//   3. reduces the block's new absmaxes (largest |m|, largest v): per warp, then over the
//      warps through shared memory;
//   4. requantizes each moment against its absmax by its nearest code.
// The CPU twin (cpu/adamw_8bit.cpp) gives the same bits: maxima do not depend on order, and
// the arithmetic is explicitly rounded.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_kernels.h"
#include "bertc/runtime/dynamic_map.h"

#include "adamw_element.cuh"
#include "device_storage.cuh"
#include "launch.cuh"
#include "warp_reduce.cuh"

#include <algorithm>

namespace bertc::cuda {

namespace {
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
/// Parameters a group launch takes: its kernel argument stays under the 4 KB CUDA allows.
constexpr int kGroupSize = 40;
static_assert(kThreads == kDynamicMapSize, "each thread builds one entry of each map");
static_assert(int(QuantBlockSize::k256) == kThreads && int(QuantBlockSize::k2048) == 8 * kThreads,
              "a thread owns 1 or 8 values of its block");

/// The code of x in a block whose absmax is `absmax`.
__device__ __forceinline__ uint8_t quantize(const float *map, float x, float absmax) {
  return nearestCode(map, absmax > 0.0f ? __fdiv_rn(x, absmax) : 0.0f);
}

/// Up to kCapacity parameters in one launch: their quantization blocks one after another,
/// parameter e's from firstBlock[e] on.
template <typename T, int kCapacity> struct ParameterGroup {
  AdamW8bitParameter<T> parameters[kCapacity];
  int64_t firstBlock[kCapacity + 1];
  int count;
};

/// A thread block per quantization block of the group's parameters: it finds its
/// parameter, then updates its block.
template <int kPerThread, typename T, int kCapacity>
__global__ void __launch_bounds__(kThreads)
    adamw8bitKernel(ParameterGroup<T, kCapacity> group, AdamWScalars s) {
  int e = 0;
  while (e + 1 < group.count && int64_t(blockIdx.x) >= group.firstBlock[e + 1])
    ++e;
  const AdamW8bitParameter<T> &p = group.parameters[e];
  const int64_t block = int64_t(blockIdx.x) - group.firstBlock[e];
  const float decayFactor = p.decay ? s.decayFactor : 1.0f;
  __shared__ float signedMap[kDynamicMapSize], unsignedMap[kDynamicMapSize];
  __shared__ float warpMaxima[2][kWarps];
  signedMap[threadIdx.x] = dynamicMapValue(DynamicMapKind::Signed, int(threadIdx.x));
  unsignedMap[threadIdx.x] = dynamicMapValue(DynamicMapKind::Unsigned, int(threadIdx.x));
  __syncthreads();

  const int64_t begin = block * kPerThread * kThreads + threadIdx.x;
  const float mScale = p.state.mAbsmax[block], vScale = p.state.vAbsmax[block];
  float m[kPerThread], v[kPerThread];
  float mAbsmax = 0.0f, vAbsmax = 0.0f;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t i = begin + int64_t(k) * kThreads;
    if (i >= p.n)
      break;
    m[k] = __fmul_rn(signedMap[p.state.mCodes[i]], mScale);
    v[k] = __fmul_rn(unsignedMap[p.state.vCodes[i]], vScale);
    adamwElement(p.param[i], p.grad[i], m[k], v[k], s, decayFactor);
    if (p.working)
      storeFloat(p.working + i, p.param[i]);
    mAbsmax = fmaxf(mAbsmax, fabsf(m[k]));
    vAbsmax = fmaxf(vAbsmax, v[k]);
  }

  mAbsmax = warpMax(mAbsmax);
  vAbsmax = warpMax(vAbsmax);
  if (threadIdx.x % 32 == 0) {
    warpMaxima[0][threadIdx.x / 32] = mAbsmax;
    warpMaxima[1][threadIdx.x / 32] = vAbsmax;
  }
  __syncthreads();
  for (int warp = 0; warp < kWarps; ++warp) {
    mAbsmax = fmaxf(mAbsmax, warpMaxima[0][warp]);
    vAbsmax = fmaxf(vAbsmax, warpMaxima[1][warp]);
  }

#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int64_t i = begin + int64_t(k) * kThreads;
    if (i >= p.n)
      break;
    p.state.mCodes[i] = quantize(signedMap, m[k], mAbsmax);
    p.state.vCodes[i] = quantize(unsignedMap, v[k], vAbsmax);
  }
  if (threadIdx.x == 0) {
    p.state.mAbsmax[block] = mAbsmax;
    p.state.vAbsmax[block] = vAbsmax;
  }
}

/// The groups of up to kCapacity of `count` parameters, a launch each.
template <int kCapacity, typename T>
void launchGroups(const AdamW8bitParameter<T> *parameters, int64_t count, QuantBlockSize blockSize,
                  const cpu::AdamWConfig &config, cudaStream_t stream) {
  static_assert(sizeof(ParameterGroup<T, kCapacity>) + sizeof(AdamWScalars) <= 4000,
                "a group launch's arguments fit CUDA's 4 KB");
  for (int64_t first = 0; first < count; first += kCapacity) {
    ParameterGroup<T, kCapacity> group{};
    group.count = int(std::min<int64_t>(kCapacity, count - first));
    for (int e = 0; e < group.count; ++e) {
      group.parameters[e] = parameters[first + e];
      group.firstBlock[e + 1] =
          group.firstBlock[e] + quantBlockCount(group.parameters[e].n, blockSize);
    }
    const unsigned blocks = unsigned(group.firstBlock[group.count]);
    if (blocks == 0)
      continue;
    if (blockSize == QuantBlockSize::k256)
      BERTC_LAUNCH((adamw8bitKernel<1, T, kCapacity>), blocks, kThreads, 0, stream, group,
                   adamwScalars(config));
    else
      BERTC_LAUNCH((adamw8bitKernel<8, T, kCapacity>), blocks, kThreads, 0, stream, group,
                   adamwScalars(config));
  }
}

/// One parameter (config.weightDecay 0 if it does not decay), as a group of one, whose
/// launch takes a small argument.
template <typename T>
void updateOne(float *param, const float *grad, const AdamW8bitState &state, T *working, int64_t n,
               QuantBlockSize blockSize, const cpu::AdamWConfig &config, cudaStream_t stream) {
  const AdamW8bitParameter<T> parameter{param, grad, state, working, n, /*decay=*/true};
  launchGroups<1>(&parameter, 1, blockSize, config, stream);
}
} // namespace

template <typename T>
void adamw8bitUpdate(const AdamW8bitParameter<T> *parameters, int64_t count,
                     QuantBlockSize blockSize, const cpu::AdamWConfig &config,
                     cudaStream_t stream) {
  launchGroups<kGroupSize>(parameters, count, blockSize, config, stream);
}

void adamw8bitUpdate(float *param, const float *grad, const AdamW8bitState &state, int64_t n,
                     QuantBlockSize blockSize, const cpu::AdamWConfig &config,
                     cudaStream_t stream) {
  // No working copy: the kernel never stores through the null pointer.
  updateOne(param, grad, state, static_cast<bf16 *>(nullptr), n, blockSize, config, stream);
}

void adamw8bitUpdate(float *master, const float *grad, const AdamW8bitState &state, bf16 *working,
                     int64_t n, QuantBlockSize blockSize, const cpu::AdamWConfig &config,
                     cudaStream_t stream) {
  updateOne(master, grad, state, working, n, blockSize, config, stream);
}

void adamw8bitUpdate(float *master, const float *grad, const AdamW8bitState &state, fp16 *working,
                     int64_t n, QuantBlockSize blockSize, const cpu::AdamWConfig &config,
                     cudaStream_t stream) {
  updateOne(master, grad, state, working, n, blockSize, config, stream);
}

template void adamw8bitUpdate(const AdamW8bitParameter<::bertc::bf16> *, int64_t, QuantBlockSize,
                              const cpu::AdamWConfig &, cudaStream_t);
template void adamw8bitUpdate(const AdamW8bitParameter<::bertc::fp16> *, int64_t, QuantBlockSize,
                              const cpu::AdamWConfig &, cudaStream_t);

} // namespace bertc::cuda
