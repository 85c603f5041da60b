// CUDA kernels of quantized frozen weights: the device twins of cpu_quantized_weight.h's
// dequantizers, called with pointers into device memory (the weight's parts at the offsets
// of abi/quantized_weight_layout.h), bit for bit the CPU's values. Each launcher queues its
// kernel on `stream` and throws CudaError when the launch fails.
#pragma once

#include "bertc/abi/quantized_weight_layout.h"
#include "bertc/runtime/half_types.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace bertc::cuda {

/// out[weight.values] = the NF4 tensor `weight` (plain or double quantized) dequantized and
/// rounded once to T, as cpu::dequantizeNf4.
template <typename T> void dequantizeNf4(const Nf4Weight &weight, T *out, cudaStream_t stream);

/// out[rows, cols] = q * (absmax[r] * (1 / 127)) rounded once to T, as
/// cpu::dequantizeInt8Rows.
template <typename T>
void dequantizeInt8Rows(const int8_t *q, const float *absmax, T *out, int64_t rows, int64_t cols,
                        cudaStream_t stream);

} // namespace bertc::cuda
