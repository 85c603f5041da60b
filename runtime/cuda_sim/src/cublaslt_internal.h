// Private to the simulated cuBLASLt: what its descriptors hold, the matmul problem that
// cublasLtMatmulAlgoGetHeuristic and cublasLtMatmul check alike (cublaslt_matmul.cpp), the
// host computation (cublaslt_compute.cpp) and the fp16/bf16/TF32 conversions it rounds with
// (cublaslt_convert.cpp).
#pragma once

#include <cublasLt.h>

#include <cstdint>

/// A handle holds nothing: every call gets all it needs from its arguments.
struct cublasLtContext {};

namespace bertc::sim::cublaslt {

/// Fields have the attribute's type (cublasLt.h), so attributes are copied byte for byte.
struct MatrixLayout {
  uint32_t type;
  int32_t order = CUBLASLT_ORDER_COL;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batchCount = 1;
  int64_t batchStride = 0;
  uint32_t batchMode = CUBLASLT_BATCH_MODE_STRIDED;
};

struct MatmulDesc {
  int32_t computeType, scaleType;
  int32_t pointerMode = CUBLASLT_POINTER_MODE_HOST;
  int32_t transA = CUBLAS_OP_N, transB = CUBLAS_OP_N;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  void *biasPointer = nullptr;
  int64_t biasBatchStride = 0;
  void *auxPointer = nullptr;
  int64_t auxLd = 0, auxBatchStride = 0;
  int32_t biasDataType = -1;
};

/// MIN_ALIGNMENT_{A,B,C,D}_BYTES, in that order.
struct MatmulPreference {
  uint64_t maxWorkspaceBytes = 0;
  uint32_t minAlignment[4] = {256, 256, 256, 256};
};

// The public handles point at these objects (the opaque structs are never dereferenced).
inline MatrixLayout *unwrap(cublasLtMatrixLayout_t layout) {
  return reinterpret_cast<MatrixLayout *>(layout);
}
inline MatmulDesc *unwrap(cublasLtMatmulDesc_t desc) {
  return reinterpret_cast<MatmulDesc *>(desc);
}
inline MatmulPreference *unwrap(cublasLtMatmulPreference_t preference) {
  return reinterpret_cast<MatmulPreference *>(preference);
}

/// Bytes per element of the types the simulation computes with, 0 for any other type.
inline size_t elementBytes(cudaDataType_t type) {
  switch (type) {
  case CUDA_R_32F:
    return 4;
  case CUDA_R_16F:
  case CUDA_R_16BF:
    return 2;
  default:
    return 0;
  }
}

/// One operand: per batch, a column-major rows x cols matrix, ld elements between columns,
/// batchStride elements between batches.
struct MatrixView {
  cudaDataType_t type;
  int64_t rows, cols, ld, batchStride;

  /// Elements from the first to one past the last one touched over `batches` batches.
  int64_t span(int64_t batches) const {
    if (rows == 0 || cols == 0)
      return 0;
    return (batches - 1) * batchStride + (cols - 1) * ld + rows;
  }
};

/// A checked problem: D (m x n) = epilogue(alpha * op(A) (m x k) op(B) (k x n) + beta * C).
struct MatmulProblem {
  int64_t m, n, k, batchCount;
  /// CUBLASLT_BATCH_MODE_POINTER_ARRAY for every layout: the operands are pointer arrays.
  bool pointerArrays;
  bool transA, transB;
  MatrixView a, b, c, d;
  cublasLtEpilogue_t epilogue;
  /// The bias or bias-gradient vector, when the epilogue has one.
  cudaDataType_t biasType;
  int64_t biasLength, biasBatchStride;
  /// The GELU-input matrix (m x n, D's type), when the epilogue has one.
  int64_t auxLd, auxBatchStride;
  /// CUBLAS_COMPUTE_32F_FAST_TF32: the multiplies see A and B rounded to TF32.
  bool tf32;
};

/// Epilogues that add a bias vector.
inline bool readsBias(cublasLtEpilogue_t epilogue) {
  return epilogue == CUBLASLT_EPILOGUE_BIAS || epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
         epilogue == CUBLASLT_EPILOGUE_GELU_BIAS || epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
}
/// Epilogues that store a bias gradient.
inline bool writesBiasGradient(cublasLtEpilogue_t epilogue) {
  return epilogue == CUBLASLT_EPILOGUE_BGRADA || epilogue == CUBLASLT_EPILOGUE_BGRADB ||
         epilogue == CUBLASLT_EPILOGUE_DGELU_BGRAD;
}
/// Epilogues that store (GELU_AUX*) or read (DGELU*) the GELU-input matrix.
inline bool usesAux(cublasLtEpilogue_t epilogue) {
  return epilogue == CUBLASLT_EPILOGUE_GELU_AUX || epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS ||
         epilogue == CUBLASLT_EPILOGUE_DGELU || epilogue == CUBLASLT_EPILOGUE_DGELU_BGRAD;
}

/// The pointers and scalars of one cublasLtMatmul, checked against its problem.
struct MatmulOperands {
  float alpha, beta;
  const void *a, *b, *c; ///< c is read only when beta != 0
  void *d;
  void *bias, *aux; ///< the descriptor's, read or written as the epilogue says
  void *workspace;  ///< null when the algorithm takes no workspace
};

/// Keeps OpenBLAS's GEMMs on the calling thread. The simulated device runs on the thread
/// that launches its work; OpenBLAS's own threads would spin between the small GEMMs a step
/// makes, taking cores from the kernels (and from other processes). Called when a handle is
/// created, before any matmul.
void keepBlasToTheCallingThread();

/// Runs the matmul on the host: inputs widened to fp32 (and rounded to TF32 for
/// problem.tf32), OpenBLAS sgemm (products summed in fp32), then the epilogue, rounding to
/// D's type at the end.
void computeMatmul(const MatmulProblem &problem, const MatmulOperands &operands);

/// `value` rounded to TF32: fp32's sign and 8-bit exponent with 10 explicit mantissa bits.
float roundToTf32(float value);

/// Widens count elements of a CUDA_R_32F, CUDA_R_16F or CUDA_R_16BF array to fp32.
void loadFloats(cudaDataType_t type, const void *source, float *target, int64_t count);
/// Narrows count fp32 values to the type, rounding to nearest even as GPU stores do.
void storeFloats(cudaDataType_t type, const float *source, void *target, int64_t count);

} // namespace bertc::sim::cublaslt
