// Internal to LinearGemms (gemm.cu): what fixes a cuBLASLt matmul (GemmShape), and its
// descriptor, layouts and algorithm (GemmPlan), made once per shape.
#pragma once

#include "bertc/abi/kernel_workspace.h"
#include "bertc/runtime/cuda_gemm.h"

#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>

namespace bertc::cuda {

/// Bytes of the three pointer arrays before the column sums' tickets at the workspace's end,
/// and what cuBLASLt gets (abi/kernel_workspace.h).
constexpr size_t kPointerArrayBytes = 3 * sizeof(void *) * size_t(kMaxPointerArrayBatch);
constexpr size_t kGemmWorkspaceBytes = kColumnSumTicketsOffset - kPointerArrayBytes;

/// What determines a matmul's descriptor and algorithm. D is m x n, op(A) m x k, op(B) k x n;
/// A, B and D are stored column-major with leading dimensions lda, ldb and ldd; `batches`
/// of them, strideA, strideB and strideD elements apart (one unbatched matrix by default).
struct GemmShape {
  int64_t m, n, k, lda, ldb, ldd;
  cublasOperation_t transA, transB;
  cudaDataType_t inputType, outputType;
  cublasComputeType_t compute;
  bool bias;
  uint32_t alignA, alignB, alignD;
  int64_t batches = 1, strideA = 0, strideB = 0, strideD = 0;
  /// The batches' matrices are named by pointer arrays (the strides are unused).
  bool pointerArrays = false;
  /// With `bias`: the bias pointer's alignment, which cuBLASLt's heuristic reads from the
  /// pointer the plan's descriptor holds when it chooses the algorithm.
  uint32_t alignBias = 0;

  auto tie() const {
    return std::tie(m, n, k, lda, ldb, ldd, transA, transB, inputType, outputType, compute, bias,
                    alignA, alignB, alignD, batches, strideA, strideB, strideD, pointerArrays,
                    alignBias);
  }
  bool operator<(const GemmShape &other) const { return tie() < other.tie(); }
};

/// The cuBLASLt objects of one GemmShape; no algorithm for a pointer-array shape that
/// cuBLASLt cannot run (its callers then run the strided-batched shapes instead).
struct GemmPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  std::optional<cublasLtMatmulAlgo_t> algo;
};

/// The plan of `shape`: its descriptor and layouts, and cuBLASLt's first choice of algorithm
/// within kGemmWorkspaceBytes and the shape's alignments (the bias's from `bias`, a pointer
/// of shape.alignBias's alignment). Throws CudaError where cuBLASLt has no algorithm, except
/// for a pointer-array shape, whose plan then has none.
GemmPlan makeGemmPlan(cublasLtHandle_t handle, const GemmShape &shape, const void *bias = nullptr);

/// Releases whatever of the plan exists (statuses ignored: this runs on error paths too).
void destroyGemmPlan(GemmPlan &plan);

/// Points the plan's bias epilogue at `bias` for the next matmul.
void setBiasPointer(const GemmPlan &plan, const void *bias);

} // namespace bertc::cuda
