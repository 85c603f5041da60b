// Internal to LinearGemms (gemm.cu): the pointer arrays of a grouped batched GEMM, filled on
// the device so that a captured step replays them with the GEMM.
#pragma once

#include "bertc/runtime/cuda_gemm.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace bertc::cuda {

/// One operand of a grouped batch as its pointer array lists it: matrix i of group g at
/// base + g * groupStride + i * batchStride bytes.
struct GroupedMatrices {
  const char *base;
  int64_t batchStride, groupStride;
};

/// cuBLASLt's A, B and D of up to kMaxBatchedProducts products, each `groups` groups of
/// `count` matrices. Unit u, a group of one product, is group u % groups of product
/// u / groups.
struct GroupedProducts {
  GroupedMatrices a[kMaxBatchedProducts], b[kMaxBatchedProducts], d[kMaxBatchedProducts];
  int64_t groups, count;
};

/// Queues on `stream` the kernel that writes the pointer arrays of cuBLASLt's A, B and D,
/// one after another from `arrays` (device memory, 3 * total pointers): entry e of each is
/// matrix e % count of unit firstUnit + e / count, for total matrices.
void fillPointerArrays(const void **arrays, const GroupedProducts &products, int64_t firstUnit,
                       int64_t total, cudaStream_t stream);

} // namespace bertc::cuda
