// Dequantizing frozen weights on the GPU: the CPU twins' values (cpu/weight_dequantize.cpp),
// bit for bit. Grid-stride loops over groups of 16 values, a quarter of an NF4 block (8
// packed bytes, one 8-byte load) or 16 int8s of one row (one 16-byte load), each group
// written with 16-byte stores where its place allows (device_storage.cuh). A thread block
// first copies the code maps into shared memory: the NF4 map, and with double quantization
// the absmax codes' map, one entry a thread. The products are explicitly rounded, so no
// multiply-add is fused: a nested absmax is rounded after its product and after its sum, as
// the CPU (and bitsandbytes, in two separate operations) does.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_quantized_weight.h"
#include "bertc/runtime/quantized_weight.h"

#include "device_storage.cuh"
#include "launch.cuh"

namespace bertc::cuda {

namespace {
constexpr int kThreads = 256;
/// Values a thread takes at each step of its grid-stride loop.
constexpr int kGroupValues = 16;
static_assert(kThreads == kNestedMapSize, "each thread copies one entry of the nested map");
static_assert(kNf4BlockSize % kGroupValues == 0, "a group lies within one NF4 block");

__device__ __forceinline__ int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

/// Stores values[0, count) rounded to T at out: 16 bytes (kVectorValues<T> values) at a time.
template <typename T>
__device__ __forceinline__ void storeGroup(T *out, int count, const float (&values)[kGroupValues]) {
  constexpr int kChunk = kVectorValues<T>;
#pragma unroll
  for (int first = 0; first < kGroupValues; first += kChunk) {
    if (first >= count)
      return;
    float chunk[kChunk];
#pragma unroll
    for (int j = 0; j < kChunk; ++j)
      chunk[j] = values[first + j];
    storeRoundedFloats(out + first, int(smaller(count - first, kChunk)), chunk);
  }
}

template <typename T, bool kNested>
__global__ void __launch_bounds__(kThreads) dequantizeNf4Kernel(Nf4Weight weight, T *out) {
  __shared__ float quantMap[kNf4MapSize];
  __shared__ float nestedMap[kNested ? kNestedMapSize : 1];
  if (threadIdx.x < kNf4MapSize)
    quantMap[threadIdx.x] = weight.quantMap[threadIdx.x];
  if constexpr (kNested)
    nestedMap[threadIdx.x] = weight.nestedMap[threadIdx.x];
  __syncthreads();

  const int64_t n = weight.values, packedBytes = (n + 1) / 2; // nf4PackedBytes, host-only
  const int64_t groups = (n + kGroupValues - 1) / kGroupValues;
  for (int64_t group = gridStrideBegin(); group < groups; group += gridStride()) {
    const int64_t block = group / (kNf4BlockSize / kGroupValues);
    float absmax;
    if constexpr (kNested)
      absmax = __fadd_rn(__fmul_rn(nestedMap[weight.absmaxCodes[block]],
                                   weight.nestedAbsmax[block / kNf4NestedBlockSize]),
                         *weight.absmaxMean);
    else
      absmax = weight.absmax[block];
    const int64_t firstByte = group * (kGroupValues / 2);
    uint8_t bytes[kGroupValues / 2];
    loadValues(weight.packed + firstByte, int(smaller(kGroupValues / 2, packedBytes - firstByte)),
               bytes);
    float values[kGroupValues];
#pragma unroll
    for (int j = 0; j < kGroupValues / 2; ++j) {
      values[2 * j] = __fmul_rn(quantMap[firstNf4Code(bytes[j])], absmax);
      values[2 * j + 1] = __fmul_rn(quantMap[secondNf4Code(bytes[j])], absmax);
    }
    storeGroup(out + group * kGroupValues, int(smaller(kGroupValues, n - group * kGroupValues)),
               values);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    dequantizeInt8RowsKernel(const int8_t *q, const float *absmax, T *out, int64_t rows,
                             int64_t cols) {
  const int64_t groupsPerRow = (cols + kGroupValues - 1) / kGroupValues;
  for (int64_t group = gridStrideBegin(); group < rows * groupsPerRow; group += gridStride()) {
    const int64_t row = group / groupsPerRow, col = group % groupsPerRow * kGroupValues;
    const int64_t first = row * cols + col;
    const int count = int(smaller(kGroupValues, cols - col));
    const float scale = __fmul_rn(absmax[row], 1.0f / 127.0f);
    int8_t codes[kGroupValues];
    loadValues(q + first, count, codes);
    float values[kGroupValues];
#pragma unroll
    for (int j = 0; j < kGroupValues; ++j)
      values[j] = __fmul_rn(float(codes[j]), scale);
    storeGroup(out + first, count, values);
  }
}
} // namespace

template <typename T> void dequantizeNf4(const Nf4Weight &weight, T *out, cudaStream_t stream) {
  const int64_t groups = (weight.values + kGroupValues - 1) / kGroupValues;
  if (groups == 0)
    return;
  if (weight.absmaxCodes)
    BERTC_LAUNCH((dequantizeNf4Kernel<T, true>), gridFor(groups, kThreads), kThreads, 0, stream,
                 weight, out);
  else
    BERTC_LAUNCH((dequantizeNf4Kernel<T, false>), gridFor(groups, kThreads), kThreads, 0, stream,
                 weight, out);
}

template <typename T>
void dequantizeInt8Rows(const int8_t *q, const float *absmax, T *out, int64_t rows, int64_t cols,
                        cudaStream_t stream) {
  const int64_t groups = rows * ((cols + kGroupValues - 1) / kGroupValues);
  if (groups == 0)
    return;
  BERTC_LAUNCH(dequantizeInt8RowsKernel<T>, gridFor(groups, kThreads), kThreads, 0, stream, q,
               absmax, out, rows, cols);
}

#define INSTANTIATE_DEQUANTIZE(T)                                                                  \
  template void dequantizeNf4(const Nf4Weight &, T *, cudaStream_t);                               \
  template void dequantizeInt8Rows(const int8_t *, const float *, T *, int64_t, int64_t,           \
                                   cudaStream_t);
BERTC_CUDA_FOR_EACH_STORAGE_TYPE(INSTANTIATE_DEQUANTIZE)
#undef INSTANTIATE_DEQUANTIZE

} // namespace bertc::cuda
