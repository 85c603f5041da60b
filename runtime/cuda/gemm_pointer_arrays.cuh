// Internal to LinearGemms (gemm.cu): the pointer arrays of a grouped batched GEMM, filled on
// the device so that a captured step replays them with the GEMM.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace bertc::cuda {

/// One operand of a grouped batch as its pointer array lists it: matrix i of group g at
/// base + g * groupStride + i * batchStride bytes.
struct GroupedMatrices {
  const char *base;
  int64_t batchStride, groupStride;
};

/// Queues on `stream` the kernel that writes the pointer arrays of cuBLASLt's A, B and D,
/// one after another from `arrays` (device memory, 3 * total pointers): entry g * count + i
/// of each is matrix i of group g, for the total = groups * count matrices.
void fillPointerArrays(const void **arrays, const GroupedMatrices &a, const GroupedMatrices &b,
                       const GroupedMatrices &d, int64_t count, int64_t total, cudaStream_t stream);

} // namespace bertc::cuda
