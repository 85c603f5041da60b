// LinearGemms (cuda_gemm.h): row-major linear layers as column-major cuBLASLt matmuls.
// A row-major [r, c] matrix is a column-major [c, r] one, so with D = op(A) op(B):
//   forward          y^T [out, rows]  = (w as [in, out])^T   x^T [in, rows]
//   backward input  dx^T [in, rows]   =  w as [in, out]      dy^T [out, rows]
//   backward weight dw^T [in, out]    =  x^T [in, rows]      (dy^T as [out, rows])^T
// The attention's batched products (batchedGemm) are row-major too: D = op(A) op(B) is
// D^T = op(B)^T op(A)^T, so cuBLASLt's A is the caller's b and its B the caller's a. Their
// groups (heads) of strided batches (sequences) are one matmul over pointer arrays that a
// kernel fills in the workspace's last bytes, or a strided-batched matmul per group.
// Each distinct (shape, types, math, transposes, epilogue, batching, pointer alignment)
// gets a matmul descriptor, layouts and an algorithm once; later calls only set the pointers.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_gemm.h"

#include "gemm_pointer_arrays.cuh"

#include <cublasLt.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>

namespace bertc::cuda {

namespace {
template <typename T> constexpr cudaDataType_t dataType();
template <> constexpr cudaDataType_t dataType<float>() { return CUDA_R_32F; }
template <> constexpr cudaDataType_t dataType<bf16>() { return CUDA_R_16BF; }
template <> constexpr cudaDataType_t dataType<fp16>() { return CUDA_R_16F; }

/// cuBLASLt's compute type for `math` on operands of type T: TF32 only for fp32 ones.
template <typename T> cublasComputeType_t computeType(GemmMath math) {
  if (math == GemmMath::Fp32)
    return CUBLAS_COMPUTE_32F;
  if (!std::is_same_v<T, float>)
    throw CudaError("TF32 GEMM math applies to fp32 operands only");
  return CUBLAS_COMPUTE_32F_FAST_TF32;
}

/// Bytes of the three pointer arrays at the workspace's end, and what cuBLASLt gets.
constexpr size_t kPointerArrayBytes = 3 * sizeof(void *) * size_t(kMaxPointerArrayBatch);
constexpr size_t kGemmWorkspaceBytes = kCublasLtWorkspaceBytes - kPointerArrayBytes;

/// The largest power of two (up to 256) dividing the address and the batch and group
/// strides in bytes: cuBLASLt's heuristic must not pick an algorithm that needs more
/// alignment than the arena slot, or any batch's matrix, has. (A matrix at a multiple of the
/// strides from the first then gets the same alignment, hence the same algorithm.)
uint32_t alignmentOf(const void *pointer, int64_t batchStrideBytes = 0,
                     int64_t groupStrideBytes = 0) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  uint32_t alignment = 256;
  while (alignment > 1 && (address % alignment != 0 || batchStrideBytes % alignment != 0 ||
                           groupStrideBytes % alignment != 0))
    alignment /= 2;
  return alignment;
}

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

  auto tie() const {
    return std::tie(m, n, k, lda, ldb, ldd, transA, transB, inputType, outputType, compute, bias,
                    alignA, alignB, alignD, batches, strideA, strideB, strideD, pointerArrays);
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

void setAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                  const void *value, size_t bytes) {
  BERTC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, value, bytes));
}

/// Makes `layout` hold `batches` matrices, `stride` elements apart or named by a pointer array.
void setBatches(cublasLtMatrixLayout_t layout, int64_t batches, int64_t stride, bool pointerArray) {
  const int32_t count = int32_t(batches);
  BERTC_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                      &count, sizeof count));
  if (pointerArray) {
    const uint32_t mode = CUBLASLT_BATCH_MODE_POINTER_ARRAY;
    BERTC_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE,
                                                        &mode, sizeof mode));
  } else {
    BERTC_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
  }
}
} // namespace

struct LinearGemms::State {
  cublasLtHandle_t handle = nullptr;
  void *workspace;
  cudaStream_t stream;
  std::map<GemmShape, GemmPlan> plans;
  GroupedCalls groupedCalls;

  ~State() {
    for (auto &[shape, plan] : plans)
      destroy(plan);
    if (handle)
      cublasLtDestroy(handle);
  }

  const GemmPlan &planFor(const GemmShape &shape) {
    if (auto known = plans.find(shape); known != plans.end())
      return known->second;
    GemmPlan plan;
    try {
      describe(shape, plan);
      plan.algo = chooseAlgorithm(shape, plan);
      if (!plan.algo && !shape.pointerArrays)
        throw CudaError("cuBLASLt has no algorithm for a " + std::to_string(shape.m) + "x" +
                        std::to_string(shape.n) + "x" + std::to_string(shape.k) +
                        " GEMM with these types on this GPU (bf16 and TF32 need sm_80 or newer)");
    } catch (...) {
      destroy(plan);
      throw;
    }
    return plans.emplace(shape, plan).first->second;
  }

  /// Releases whatever of the plan exists (statuses ignored: this runs on error paths).
  static void destroy(GemmPlan &plan) {
    for (cublasLtMatrixLayout_t layout : {plan.a, plan.b, plan.d})
      if (layout)
        cublasLtMatrixLayoutDestroy(layout);
    if (plan.desc)
      cublasLtMatmulDescDestroy(plan.desc);
  }

  static void describe(const GemmShape &shape, GemmPlan &plan) {
    BERTC_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan.desc, shape.compute, CUDA_R_32F));
    setAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &shape.transA, sizeof shape.transA);
    setAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &shape.transB, sizeof shape.transB);
    const cublasLtEpilogue_t epilogue =
        shape.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    setAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
    // Stored (pre-transpose) shapes of A and B.
    const bool aT = shape.transA == CUBLAS_OP_T, bT = shape.transB == CUBLAS_OP_T;
    BERTC_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.a, shape.inputType, aT ? shape.k : shape.m,
                                                  aT ? shape.m : shape.k, shape.lda));
    BERTC_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.b, shape.inputType, bT ? shape.n : shape.k,
                                                  bT ? shape.k : shape.n, shape.ldb));
    BERTC_CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&plan.d, shape.outputType, shape.m, shape.n, shape.ldd));
    if (shape.batches > 1 || shape.pointerArrays) {
      setBatches(plan.a, shape.batches, shape.strideA, shape.pointerArrays);
      setBatches(plan.b, shape.batches, shape.strideB, shape.pointerArrays);
      setBatches(plan.d, shape.batches, shape.strideD, shape.pointerArrays);
    }
  }

  /// cuBLASLt's first choice for the plan within the workspace and the pointers' alignment;
  /// none when it has no algorithm for them.
  std::optional<cublasLtMatmulAlgo_t> chooseAlgorithm(const GemmShape &shape,
                                                      const GemmPlan &plan) const {
    cublasLtMatmulPreference_t preference = nullptr;
    BERTC_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    const size_t workspaceBytes = kGemmWorkspaceBytes;
    const std::tuple<cublasLtMatmulPreferenceAttributes_t, const void *, size_t> preferences[] = {
        {CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspaceBytes, sizeof workspaceBytes},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &shape.alignA, sizeof shape.alignA},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &shape.alignB, sizeof shape.alignB},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &shape.alignD, sizeof shape.alignD},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &shape.alignD, sizeof shape.alignD}};
    cublasLtMatmulHeuristicResult_t result{};
    int algorithms = 0;
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    for (const auto &[attribute, value, bytes] : preferences)
      if (status == CUBLAS_STATUS_SUCCESS)
        status = cublasLtMatmulPreferenceSetAttribute(preference, attribute, value, bytes);
    if (status == CUBLAS_STATUS_SUCCESS)
      status = cublasLtMatmulAlgoGetHeuristic(handle, plan.desc, plan.a, plan.b, plan.d, plan.d,
                                              preference, 1, &result, &algorithms);
    cublasLtMatmulPreferenceDestroy(preference);
    // "Not supported" is cuBLASLt's way of saying no algorithm fits.
    if (status != CUBLAS_STATUS_NOT_SUPPORTED)
      BERTC_CUBLAS_CHECK(status);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED || algorithms == 0)
      return std::nullopt;
    return result.algo;
  }

  /// d = a b (+ bias), queued on the stream; with `beta` 1, d = a b + c, c being d itself
  /// unless given (C has D's layout, and shape.alignD is the alignment of both). For a
  /// pointer-array shape, a, b and d are the arrays.
  void run(const GemmShape &shape, const void *a, const void *b, void *d, const void *bias,
           float beta = 0.0f, const void *c = nullptr) {
    const GemmPlan &plan = planFor(shape);
    if (shape.bias)
      setAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    const float alpha = 1.0f;
    BERTC_CUBLAS_CHECK(cublasLtMatmul(handle, plan.desc, &alpha, a, plan.a, b, plan.b, &beta,
                                      c ? c : d, plan.d, d, plan.d, &*plan.algo, workspace,
                                      kGemmWorkspaceBytes, stream));
  }

  /// `groups` groups of shape.batches strided matrices (strides in `shape`), cuBLASLt's A,
  /// B and D: as pointer-array matmuls of up to kMaxPointerArrayBatch matrices, or, where
  /// cuBLASLt has no algorithm for those, one strided-batched matmul per group.
  void runGroups(const GemmShape &shape, int64_t groups, GroupedMatrices a, GroupedMatrices b,
                 GroupedMatrices d) {
    const int64_t count = shape.batches;
    const int64_t groupsPerCall =
        count <= kMaxPointerArrayBatch ? std::min(groups, kMaxPointerArrayBatch / count) : 1;
    int64_t first = 0;
    while (first < groups && groupsPerCall > 1) {
      const int64_t callGroups = std::min(groupsPerCall, groups - first);
      GemmShape grouped = shape;
      grouped.batches = callGroups * count;
      grouped.pointerArrays = true;
      grouped.strideA = grouped.strideB = grouped.strideD = 0;
      if (!planFor(grouped).algo)
        break;
      const auto from = [first](GroupedMatrices operand) {
        operand.base += first * operand.groupStride;
        return operand;
      };
      const void **arrays =
          reinterpret_cast<const void **>(static_cast<char *>(workspace) + kGemmWorkspaceBytes);
      const int64_t total = grouped.batches;
      fillPointerArrays(arrays, from(a), from(b), from(d), count, total, stream);
      run(grouped, arrays, arrays + total, arrays + 2 * total, nullptr);
      ++groupedCalls.pointerArrays;
      first += callGroups;
    }
    if (first < groups)
      ++groupedCalls.perGroup;
    for (int64_t group = first; group < groups; ++group)
      run(shape, a.base + group * a.groupStride, b.base + group * b.groupStride,
          const_cast<char *>(d.base) + group * d.groupStride, nullptr);
  }
};

LinearGemms::LinearGemms(void *workspace, cudaStream_t stream) : state(new State) {
  state->workspace = workspace;
  state->stream = stream;
  BERTC_CUBLAS_CHECK(cublasLtCreate(&state->handle));
}

LinearGemms::~LinearGemms() = default;

template <typename T>
void LinearGemms::linearForward(const T *x, const T *w, const T *b, T *y, int64_t rows, int64_t in,
                                int64_t out, GemmMath math) {
  if (rows == 0)
    return;
  const GemmShape shape{out,
                        rows,
                        in,
                        in,
                        in,
                        out,
                        CUBLAS_OP_T,
                        CUBLAS_OP_N,
                        dataType<T>(),
                        dataType<T>(),
                        computeType<T>(math),
                        b != nullptr,
                        alignmentOf(w),
                        alignmentOf(x),
                        alignmentOf(y)};
  state->run(shape, w, x, y, b);
}

namespace {
/// dx[rows, in] = dy[rows, out] w[out, in] as cuBLASLt sees it (column-major:
/// dx^T = w^T dy^T), its output aligned to `outputAlignment`.
template <typename T>
GemmShape inputGradientShape(const T *dy, const T *w, int64_t rows, int64_t in, int64_t out,
                             GemmMath math, uint32_t outputAlignment) {
  return {in,
          rows,
          out,
          in,
          out,
          in,
          CUBLAS_OP_N,
          CUBLAS_OP_N,
          dataType<T>(),
          dataType<T>(),
          computeType<T>(math),
          false,
          alignmentOf(w),
          alignmentOf(dy),
          outputAlignment};
}
} // namespace

template <typename T>
void LinearGemms::linearBackwardInput(const T *dy, const T *w, T *dx, int64_t rows, int64_t in,
                                      int64_t out, GemmMath math) {
  if (rows > 0)
    state->run(inputGradientShape(dy, w, rows, in, out, math, alignmentOf(dx)), w, dy, dx, nullptr);
}

template <typename T>
void LinearGemms::linearBackwardInputAdd(const T *dy, const T *w, const T *addend, T *dx,
                                         int64_t rows, int64_t in, int64_t out, GemmMath math) {
  if (rows == 0)
    return;
  // C and D share a layout and an alignment preference: the smaller of the two.
  const uint32_t alignment = std::min(alignmentOf(dx), alignmentOf(addend));
  state->run(inputGradientShape(dy, w, rows, in, out, math, alignment), w, dy, dx, nullptr, 1.0f,
             addend);
}

namespace {

/// dw[out, in] = dy^T x as cuBLASLt sees it (column-major: dw^T = x^T dy).
template <typename T>
GemmShape weightGradientShape(const T *dy, const T *x, const float *dw, int64_t rows, int64_t in,
                              int64_t out, GemmMath math) {
  return {in,
          out,
          rows,
          in,
          out,
          in,
          CUBLAS_OP_N,
          CUBLAS_OP_T,
          dataType<T>(),
          CUDA_R_32F,
          computeType<T>(math),
          false,
          alignmentOf(x),
          alignmentOf(dy),
          alignmentOf(dw)};
}

} // namespace

template <typename T>
void LinearGemms::linearBackwardWeight(const T *dy, const T *x, float *dw, int64_t rows, int64_t in,
                                       int64_t out, GemmMath math) {
  if (rows == 0) {
    BERTC_CUDA_CHECK(cudaMemsetAsync(dw, 0, size_t(out * in) * sizeof(float), state->stream));
    return;
  }
  state->run(weightGradientShape(dy, x, dw, rows, in, out, math), x, dy, dw, nullptr);
}

template <typename T>
void LinearGemms::linearBackwardWeightAccumulate(const T *dy, const T *x, float *dw, int64_t rows,
                                                 int64_t in, int64_t out, GemmMath math) {
  if (rows > 0)
    state->run(weightGradientShape(dy, x, dw, rows, in, out, math), x, dy, dw, nullptr, 1.0f);
}

template <typename T, typename OutT>
void LinearGemms::batchedGemm(const BatchedOperand<T> &a, const BatchedOperand<T> &b,
                              const BatchedOutput<OutT> &d, int64_t m, int64_t n, int64_t k,
                              int64_t count, int64_t groups, GemmMath math) {
  static_assert(std::is_same_v<OutT, T> || std::is_same_v<OutT, float>,
                "batched GEMMs write the input type or fp32");
  if (m == 0 || n == 0 || count == 0 || groups == 0)
    return;
  // Row-major d = op(a) op(b) is column-major d^T = op(b)^T op(a)^T: a matrix row-major
  // and untransposed is column-major transposed already.
  const auto operation = [](bool transposed) { return transposed ? CUBLAS_OP_T : CUBLAS_OP_N; };
  const int64_t inputBytes = sizeof(T), outputBytes = sizeof(OutT);
  GemmShape shape{n,
                  m,
                  k,
                  b.ld,
                  a.ld,
                  d.ld,
                  operation(b.transposed),
                  operation(a.transposed),
                  dataType<T>(),
                  dataType<OutT>(),
                  computeType<T>(math),
                  false,
                  alignmentOf(b.data, b.batchStride * inputBytes, b.groupStride * inputBytes),
                  alignmentOf(a.data, a.batchStride * inputBytes, a.groupStride * inputBytes),
                  alignmentOf(d.data, d.batchStride * outputBytes, d.groupStride * outputBytes)};
  shape.batches = count;
  shape.strideA = b.batchStride;
  shape.strideB = a.batchStride;
  shape.strideD = d.batchStride;
  if (groups == 1) {
    state->run(shape, b.data, a.data, d.data, nullptr);
    return;
  }
  const auto grouped = [](const void *data, int64_t batchStride, int64_t groupStride,
                          int64_t elementBytes) {
    return GroupedMatrices{static_cast<const char *>(data), batchStride * elementBytes,
                           groupStride * elementBytes};
  };
  state->runGroups(shape, groups, grouped(b.data, b.batchStride, b.groupStride, inputBytes),
                   grouped(a.data, a.batchStride, a.groupStride, inputBytes),
                   grouped(d.data, d.batchStride, d.groupStride, outputBytes));
}

LinearGemms::GroupedCalls LinearGemms::groupedCalls() const { return state->groupedCalls; }

cudaStream_t LinearGemms::stream() const { return state->stream; }

#define INSTANTIATE(T)                                                                             \
  template void LinearGemms::linearForward(const T *, const T *, const T *, T *, int64_t, int64_t, \
                                           int64_t, GemmMath);                                     \
  template void LinearGemms::linearBackwardInput(const T *, const T *, T *, int64_t, int64_t,      \
                                                 int64_t, GemmMath);                               \
  template void LinearGemms::linearBackwardInputAdd(const T *, const T *, const T *, T *, int64_t, \
                                                    int64_t, int64_t, GemmMath);                   \
  template void LinearGemms::linearBackwardWeight(const T *, const T *, float *, int64_t, int64_t, \
                                                  int64_t, GemmMath);                              \
  template void LinearGemms::linearBackwardWeightAccumulate(const T *, const T *, float *,         \
                                                            int64_t, int64_t, int64_t, GemmMath);  \
  INSTANTIATE_BATCHED(T, T)
#define INSTANTIATE_BATCHED(T, OutT)                                                               \
  template void LinearGemms::batchedGemm(const BatchedOperand<T> &, const BatchedOperand<T> &,     \
                                         const BatchedOutput<OutT> &, int64_t, int64_t, int64_t,   \
                                         int64_t, int64_t, GemmMath);
INSTANTIATE(float)
INSTANTIATE(bf16)
INSTANTIATE(fp16)
INSTANTIATE_BATCHED(bf16, float)
INSTANTIATE_BATCHED(fp16, float)
#undef INSTANTIATE_BATCHED
#undef INSTANTIATE

} // namespace bertc::cuda
