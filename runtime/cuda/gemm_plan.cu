// The cuBLASLt plans of gemm_plan.cuh.
#include "gemm_plan.cuh"

#include "bertc/runtime/cuda_check.h"

#include <string>

namespace bertc::cuda {

namespace {
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

void describe(const GemmShape &shape, GemmPlan &plan) {
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
std::optional<cublasLtMatmulAlgo_t> chooseAlgorithm(cublasLtHandle_t handle, const GemmShape &shape,
                                                    const GemmPlan &plan) {
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
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS, heuristic = CUBLAS_STATUS_SUCCESS;
  for (const auto &[attribute, value, bytes] : preferences)
    if (status == CUBLAS_STATUS_SUCCESS)
      status = cublasLtMatmulPreferenceSetAttribute(preference, attribute, value, bytes);
  if (status == CUBLAS_STATUS_SUCCESS)
    heuristic = cublasLtMatmulAlgoGetHeuristic(handle, plan.desc, plan.a, plan.b, plan.d, plan.d,
                                               preference, 1, &result, &algorithms);
  cublasLtMatmulPreferenceDestroy(preference);
  BERTC_CUBLAS_CHECK(status);
  // "Not supported" is cuBLASLt's way of saying no algorithm fits. For pointer arrays an
  // invalid value is too (a library may reject the batch mode itself): their callers fall
  // back to strided-batched calls.
  const bool refused = heuristic == CUBLAS_STATUS_NOT_SUPPORTED ||
                       (shape.pointerArrays && heuristic == CUBLAS_STATUS_INVALID_VALUE);
  if (!refused)
    BERTC_CUBLAS_CHECK(heuristic);
  if (refused || algorithms == 0)
    return std::nullopt;
  return result.algo;
}
} // namespace

GemmPlan makeGemmPlan(cublasLtHandle_t handle, const GemmShape &shape, const void *bias) {
  GemmPlan plan;
  try {
    describe(shape, plan);
    if (shape.bias)
      setBiasPointer(plan, bias);
    plan.algo = chooseAlgorithm(handle, shape, plan);
    if (!plan.algo && !shape.pointerArrays)
      throw CudaError("cuBLASLt has no algorithm for a " + std::to_string(shape.m) + "x" +
                      std::to_string(shape.n) + "x" + std::to_string(shape.k) +
                      " GEMM with these types on this GPU (bf16 and TF32 need sm_80 or newer)");
  } catch (...) {
    destroyGemmPlan(plan);
    throw;
  }
  return plan;
}

void destroyGemmPlan(GemmPlan &plan) {
  for (cublasLtMatrixLayout_t layout : {plan.a, plan.b, plan.d})
    if (layout)
      cublasLtMatrixLayoutDestroy(layout);
  if (plan.desc)
    cublasLtMatmulDescDestroy(plan.desc);
}

void setBiasPointer(const GemmPlan &plan, const void *bias) {
  setAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
}

} // namespace bertc::cuda
