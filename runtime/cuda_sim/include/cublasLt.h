// The simulated device's stand-in for NVIDIA's cublasLt.h (with the cublas_api.h types it
// uses): the cuBLASLt matmul API with NVIDIA's names, enumerator values and documented
// statuses, computed on the host (src/cublaslt_*.cpp). Only the enumerators the simulation
// implements are declared, so code that needs anything else fails to compile instead of
// behaving differently from a GPU. Streams run work when it is queued, so cublasLtMatmul
// has finished when it returns.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

typedef enum {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_ARCH_MISMATCH = 8,
  CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_INTERNAL_ERROR = 14,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16
} cublasStatus_t;

/// CUBLAS_OP_C of a real matrix is its transpose.
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;

/// Both accumulate in fp32; FAST_TF32 (sm_80 and up) multiplies fp32 inputs rounded to
/// TF32 (10 mantissa bits, to nearest even), as tensor cores do.
typedef enum {
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
} cublasComputeType_t;

/// alpha and beta are read from host memory.
typedef enum { CUBLASLT_POINTER_MODE_HOST = 0 } cublasLtPointerMode_t;

/// Column-major: the leading dimension is the stride, in elements, between columns.
typedef enum { CUBLASLT_ORDER_COL = 0 } cublasLtOrder_t;

/// Post-processing of D = alpha * op(A) op(B) + beta * C, in fp32 before D is rounded.
typedef enum {
  CUBLASLT_EPILOGUE_DEFAULT = 1,
  /// x := max(x, 0).
  CUBLASLT_EPILOGUE_RELU = 2,
  /// x := x + bias[row]; the bias vector has D's row count.
  CUBLASLT_EPILOGUE_BIAS = 4,
  CUBLASLT_EPILOGUE_RELU_BIAS = (CUBLASLT_EPILOGUE_RELU | CUBLASLT_EPILOGUE_BIAS),
  /// x := GELU(x), tanh approximation.
  CUBLASLT_EPILOGUE_GELU = 32,
  /// GELU, also storing its input (D's type) in the EPILOGUE_AUX_POINTER matrix.
  CUBLASLT_EPILOGUE_GELU_AUX = (CUBLASLT_EPILOGUE_GELU | 128),
  CUBLASLT_EPILOGUE_GELU_BIAS = (CUBLASLT_EPILOGUE_GELU | CUBLASLT_EPILOGUE_BIAS),
  CUBLASLT_EPILOGUE_GELU_AUX_BIAS = (CUBLASLT_EPILOGUE_GELU_AUX | CUBLASLT_EPILOGUE_BIAS),
  /// x := x * GELU'(aux), aux being the GELU input a GELU_AUX epilogue stored.
  CUBLASLT_EPILOGUE_DGELU = 64 | 128,
  /// DGELU, also storing the row sums of the result (length: D's rows) at BIAS_POINTER.
  CUBLASLT_EPILOGUE_DGELU_BGRAD = CUBLASLT_EPILOGUE_DGELU | 16,
  /// Stores the sums of op(A) over k (length: D's rows) at BIAS_POINTER.
  CUBLASLT_EPILOGUE_BGRADA = 256,
  /// Stores the sums of op(B) over k (length: D's columns) at BIAS_POINTER.
  CUBLASLT_EPILOGUE_BGRADB = 512,
} cublasLtEpilogue_t;

/// A handle; cublasLtCreate makes one.
typedef struct cublasLtContext *cublasLtHandle_t;

typedef struct {
  uint64_t data[8];
} cublasLtMatrixLayoutOpaque_t;
/// A matrix's type, shape, leading dimension and batch (cublasLtMatrixLayoutCreate).
typedef cublasLtMatrixLayoutOpaque_t *cublasLtMatrixLayout_t;

/// What cublasLtMatmulAlgoGetHeuristic chose; it can be copied and kept.
typedef struct {
  uint64_t data[8];
} cublasLtMatmulAlgo_t;

typedef struct {
  uint64_t data[32];
} cublasLtMatmulDescOpaque_t;
/// The operation: compute and scale types, transposes, epilogue (cublasLtMatmulDescCreate).
typedef cublasLtMatmulDescOpaque_t *cublasLtMatmulDesc_t;

typedef struct {
  uint64_t data[8];
} cublasLtMatmulPreferenceOpaque_t;
/// Limits on the algorithm cublasLtMatmulAlgoGetHeuristic may choose.
typedef cublasLtMatmulPreferenceOpaque_t *cublasLtMatmulPreference_t;

/// Layout attributes; the type each value has is given beside it.
typedef enum {
  CUBLASLT_MATRIX_LAYOUT_TYPE = 0,                 ///< uint32_t (cudaDataType_t)
  CUBLASLT_MATRIX_LAYOUT_ORDER = 1,                ///< int32_t, default CUBLASLT_ORDER_COL
  CUBLASLT_MATRIX_LAYOUT_ROWS = 2,                 ///< uint64_t
  CUBLASLT_MATRIX_LAYOUT_COLS = 3,                 ///< uint64_t
  CUBLASLT_MATRIX_LAYOUT_LD = 4,                   ///< int64_t, at least ROWS
  CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,          ///< int32_t, default 1
  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6, ///< int64_t elements, default 0
  CUBLASLT_MATRIX_LAYOUT_BATCH_MODE = 8,           ///< uint32_t (cublasLtBatchMode_t), default 0
} cublasLtMatrixLayoutAttribute_t;

/// Where a batch's matrices are: STRIDED_BATCH_OFFSET elements apart, or at the addresses
/// in a device array of BATCH_COUNT pointers that cublasLtMatmul takes instead of the
/// matrix (read when the matmul runs, as a GPU's kernel reads it).
typedef enum {
  CUBLASLT_BATCH_MODE_STRIDED = 0,
  CUBLASLT_BATCH_MODE_POINTER_ARRAY = 1,
} cublasLtBatchMode_t;

/// Matmul descriptor attributes; the type each value has is given beside it.
typedef enum {
  CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0,               ///< int32_t (cublasComputeType_t)
  CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,                 ///< int32_t (cudaDataType_t) of alpha, beta
  CUBLASLT_MATMUL_DESC_POINTER_MODE = 2,               ///< int32_t, default HOST
  CUBLASLT_MATMUL_DESC_TRANSA = 3,                     ///< int32_t, default CUBLAS_OP_N
  CUBLASLT_MATMUL_DESC_TRANSB = 4,                     ///< int32_t, default CUBLAS_OP_N
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,                   ///< uint32_t, default DEFAULT
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,               ///< (const) void *, default NULL
  CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE = 10,         ///< int64_t elements, default 0
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 11,      ///< (const) void *, default NULL
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 12,           ///< int64_t, multiple of 8, >= D's rows
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE = 13, ///< int64_t, multiple of 8, default 0
  CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26,            ///< int32_t, default -1: D's type
} cublasLtMatmulDescAttributes_t;

/// Heuristic preferences; the type each value has is given beside it.
typedef enum {
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,   ///< uint64_t, default 0
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5, ///< uint32_t, default 256
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6, ///< uint32_t, default 256
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7, ///< uint32_t, default 256
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8, ///< uint32_t, default 256
} cublasLtMatmulPreferenceAttributes_t;

/// One algorithm cublasLtMatmulAlgoGetHeuristic offers.
typedef struct {
  cublasLtMatmulAlgo_t algo;
  /// Workspace bytes cublasLtMatmul must be given for this algorithm.
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
} cublasLtMatmulHeuristicResult_t;

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle);
cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle);

/// "CUBLAS_STATUS_NOT_SUPPORTED" and the like; "unrecognized status" for other values.
const char *cublasLtGetStatusName(cublasStatus_t status);
/// The library's one-line description of a status.
const char *cublasLtGetStatusString(cublasStatus_t status);

/// Values are checked when the layout is used (cublasLtMatmulAlgoGetHeuristic,
/// cublasLtMatmul), not here, as by the real library.
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType_t type,
                                          uint64_t rows, uint64_t cols, int64_t ld);
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout);
/// CUBLAS_STATUS_INVALID_VALUE for a null buf or a sizeInBytes other than the attribute's.
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t sizeInBytes);
/// With sizeInBytes 0, only *sizeWritten is set: to the attribute's size.
cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr, void *buf,
                                                size_t sizeInBytes, size_t *sizeWritten);

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
                                        cublasComputeType_t computeType, cudaDataType_t scaleType);
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc);
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                              cublasLtMatmulDescAttributes_t attr, const void *buf,
                                              size_t sizeInBytes);
cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                              cublasLtMatmulDescAttributes_t attr, void *buf,
                                              size_t sizeInBytes, size_t *sizeWritten);

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref);
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref);
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t sizeInBytes);
cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    void *buf, size_t sizeInBytes,
                                                    size_t *sizeWritten);

/// Offers one algorithm for the problem: CUBLAS_STATUS_NOT_SUPPORTED (and *returnAlgoCount
/// 0) when no algorithm fits the types, device and preferences, INVALID_VALUE when the
/// descriptors contradict each other.
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
    cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int *returnAlgoCount);

/// D = epilogue(alpha * op(A) op(B) + beta * C). A null algo runs what the heuristic would
/// choose for these pointers without workspace. Operands outside device memory fault the
/// device (cudaErrorIllegalAddress) and return CUBLAS_STATUS_EXECUTION_FAILED.
cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                              const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                              const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                              const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                              void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream);

} // extern "C"
