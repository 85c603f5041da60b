// Internal to LinearGemms (gemm.cu): the pointer arrays of grouped batched GEMMs, filled on
// the device so that a captured step replays them with the GEMMs.
#pragma once

#include "bertc/runtime/cuda_gemm.h"
#include "bertc/runtime/host_device.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace bertc::cuda {

/// One operand of a grouped batch as its pointer array lists it: matrix i of group g at
/// base + (g / groupRepeat) * groupStride + i * batchStride bytes.
struct GroupedMatrices {
  const char *base;
  int64_t batchStride, groupStride;
  int64_t groupRepeat = 1;

  /// Where group g's matrices start.
  BERTC_HOST_DEVICE const char *groupBase(int64_t g) const {
    return base + g / groupRepeat * groupStride;
  }
};

/// cuBLASLt's A, B and D of up to kMaxBatchedProducts products, each `groups` groups of
/// `count` matrices. Unit u, a group of one product, is group u % groups of product
/// u / groups.
struct GroupedProducts {
  GroupedMatrices a[kMaxBatchedProducts], b[kMaxBatchedProducts], d[kMaxBatchedProducts];
  int64_t groups, count;
};

/// The pointer arrays of one pointer-array GEMM: `total` matrices from unit `firstUnit` of
/// `products`, listed from entry `firstEntry` of the fill's arrays (3 * firstEntry pointers
/// in: A's `total`, then B's, then D's).
struct PointerArrayCall {
  GroupedProducts products;
  int64_t firstUnit, total, firstEntry;
};

/// The GEMMs whose pointer arrays one kernel fills (LinearGemms::fillListed), `entries`
/// matrices in all.
struct PointerArrayFill {
  PointerArrayCall calls[kMaxListedCalls];
  int count = 0;
  int64_t entries = 0;

  /// Lists `total` matrices from unit `firstUnit` of `products` as the next call; returns
  /// its first entry.
  int64_t add(const GroupedProducts &products, int64_t firstUnit, int64_t total) {
    const int64_t firstEntry = entries;
    calls[count++] = {products, firstUnit, total, firstEntry};
    entries += total;
    return firstEntry;
  }
};

/// Queues on `stream` the kernel that writes the pointer arrays of every call in `fill`
/// from `arrays` (device memory, 3 * fill.entries pointers): entry e of a call's A, B and D
/// is matrix e % count of unit firstUnit + e / count.
void fillPointerArrays(const void **arrays, const PointerArrayFill &fill, cudaStream_t stream);

} // namespace bertc::cuda
