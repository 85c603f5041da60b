// cublasLtMatmulAlgoGetHeuristic and cublasLtMatmul of the simulated cuBLASLt. Both check
// the problem the same way (describeProblem); the heuristic then offers the one simulated
// algorithm, recording in it the types and pointer alignments it was chosen for and the
// workspace it takes, and cublasLtMatmul holds its arguments to that record, faults the
// device on operands outside device memory, and computes (cublaslt_compute.cpp) on its
// stream: at once, or when the graph runs if the stream captures (graph_capture.h). With
// pointer arrays (CUBLASLT_BATCH_MODE_POINTER_ARRAY) the arrays are checked at the call and
// each matrix when the matmul runs, as the GPU's kernel reads the arrays then.
#include "cublaslt_internal.h"
#include "graph_capture.h"

#include "bertc/cuda_sim/device_memory.h"
#include "bertc/cuda_sim/faults.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

namespace bertc::sim::cublaslt {
namespace {

/// What the simulated algorithm keeps in cublasLtMatmulAlgo_t::data.
struct AlgoRecord {
  uint64_t tag;          ///< kAlgoTag: made by this heuristic
  uint64_t types;        ///< typeSignature of the problem it was chosen for
  uint64_t alignment[4]; ///< bytes A, B, C and D must be aligned to
  uint64_t workspaceBytes;
  /// Bytes the bias must be aligned to: what the descriptor's bias pointer had when the
  /// heuristic ran (a null pointer counts as aligned to anything), as cuBLASLt infers it.
  uint64_t biasAlignment;
};
static_assert(sizeof(AlgoRecord) <= sizeof(cublasLtMatmulAlgo_t));
constexpr uint64_t kAlgoTag = 0x6274632d73696d31; // "btc-sim1"

uint64_t typeSignature(const MatmulDesc &desc, const MatmulProblem &problem) {
  return uint64_t(uint32_t(desc.computeType)) << 32 | uint64_t(problem.a.type) << 24 |
         uint64_t(problem.b.type) << 16 | uint64_t(problem.c.type) << 8 | problem.d.type;
}

/// Layout values the simulation cannot run are NOT_SUPPORTED (row-major orders, negative
/// strides, sizes sgemm's int cannot hold: NVIDIA too supports "usually only values that can
/// be expressed as int32_t"); values no layout may have are INVALID_VALUE.
cublasStatus_t viewOf(const MatrixLayout &layout, MatrixView *view) {
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  if (layout.order != CUBLASLT_ORDER_COL || layout.batchStride < 0 ||
      layout.rows > uint64_t(kIntMax) || layout.cols > uint64_t(kIntMax) || layout.ld > kIntMax)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (layout.ld < int64_t(layout.rows) || layout.batchCount < 1 ||
      (layout.batchMode != CUBLASLT_BATCH_MODE_STRIDED &&
       layout.batchMode != CUBLASLT_BATCH_MODE_POINTER_ARRAY))
    return CUBLAS_STATUS_INVALID_VALUE;
  *view = {cudaDataType_t(layout.type), int64_t(layout.rows), int64_t(layout.cols), layout.ld,
           layout.batchStride};
  return CUBLAS_STATUS_SUCCESS;
}

/// NVIDIA's cublasLtMatmul type table for CUBLAS_COMPUTE_32F, scale type CUDA_R_32F:
/// A = B = 32F with C = D = 32F; 16F with 16F or 32F; 16BF (sm_80 and up) with 16BF or
/// 32F. CUBLAS_COMPUTE_32F_FAST_TF32 takes 32F alone, on sm_80 and up.
cublasStatus_t checkTypes(const MatmulDesc &desc, const MatmulProblem &problem) {
  const cudaDataType_t input = problem.a.type, output = problem.d.type;
  const bool ampere = computeCapability() >= 80;
  if (desc.scaleType != CUDA_R_32F || desc.pointerMode != CUBLASLT_POINTER_MODE_HOST ||
      problem.b.type != input || problem.c.type != output)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  bool supported = false;
  if (desc.computeType == CUBLAS_COMPUTE_32F)
    supported = (input == CUDA_R_32F && output == CUDA_R_32F) ||
                (input == CUDA_R_16F && (output == CUDA_R_16F || output == CUDA_R_32F)) ||
                (input == CUDA_R_16BF && ampere && (output == CUDA_R_16BF || output == CUDA_R_32F));
  else if (desc.computeType == CUBLAS_COMPUTE_32F_FAST_TF32)
    supported = input == CUDA_R_32F && output == CUDA_R_32F && ampere;
  return supported ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

/// CUBLAS_OP_C of a real matrix is CUBLAS_OP_T.
cublasStatus_t transposeOf(int32_t operation, bool *transposed) {
  if (operation != CUBLAS_OP_N && operation != CUBLAS_OP_T && operation != CUBLAS_OP_C)
    return CUBLAS_STATUS_INVALID_VALUE;
  *transposed = operation != CUBLAS_OP_N;
  return CUBLAS_STATUS_SUCCESS;
}

/// The epilogue's vectors and matrices. The bias (gradient) is D's type or, for a 16-bit D,
/// fp32 (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE). Epilogues with a GELU-input matrix need its
/// pointer and leading dimension before the heuristic runs (NOT_SUPPORTED without them);
/// the bias pointer is only needed by cublasLtMatmul.
cublasStatus_t checkEpilogue(const MatmulDesc &desc, MatmulProblem *problem) {
  const auto epilogue = cublasLtEpilogue_t(desc.epilogue);
  switch (epilogue) {
  case CUBLASLT_EPILOGUE_DEFAULT:
  case CUBLASLT_EPILOGUE_RELU:
  case CUBLASLT_EPILOGUE_BIAS:
  case CUBLASLT_EPILOGUE_RELU_BIAS:
  case CUBLASLT_EPILOGUE_GELU:
  case CUBLASLT_EPILOGUE_GELU_AUX:
  case CUBLASLT_EPILOGUE_GELU_BIAS:
  case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
  case CUBLASLT_EPILOGUE_DGELU:
  case CUBLASLT_EPILOGUE_DGELU_BGRAD:
  case CUBLASLT_EPILOGUE_BGRADA:
  case CUBLASLT_EPILOGUE_BGRADB:
    break;
  default:
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  problem->epilogue = epilogue;
  const cudaDataType_t output = problem->d.type;
  problem->biasType = desc.biasDataType == -1 ? output : cudaDataType_t(desc.biasDataType);
  problem->biasLength = epilogue == CUBLASLT_EPILOGUE_BGRADB ? problem->n : problem->m;
  problem->biasBatchStride = desc.biasBatchStride;
  problem->auxLd = desc.auxLd;
  problem->auxBatchStride = desc.auxBatchStride;
  if (readsBias(epilogue) || writesBiasGradient(epilogue)) {
    const bool fp32ForHalf = problem->biasType == CUDA_R_32F && elementBytes(output) == 2;
    if ((problem->biasType != output && !fp32ForHalf) || desc.biasBatchStride < 0)
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (usesAux(epilogue)) {
    if (!desc.auxPointer || desc.auxLd == 0)
      return CUBLAS_STATUS_NOT_SUPPORTED;
    // cublasLt.h: "Must be divisible by 8 and be no less than the number of rows".
    if (desc.auxLd < problem->m || desc.auxLd % 8 != 0 || desc.auxBatchStride % 8 != 0 ||
        desc.auxBatchStride < 0)
      return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

/// Checks the descriptors against each other and the simulated device:
///  1. each layout on its own (viewOf);
///  2. the types against NVIDIA's table (checkTypes), and whether the inputs are TF32;
///  3. shapes: D is m x n, op(A) m x k, op(B) k x n, C like D; batch counts equal;
///  4. the epilogue (checkEpilogue).
cublasStatus_t describeProblem(const MatmulDesc &desc, cublasLtMatrixLayout_t a,
                               cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                               cublasLtMatrixLayout_t d, MatmulProblem *problem) {
  for (auto [layout, view] : {std::pair{a, &problem->a}, std::pair{b, &problem->b},
                              std::pair{c, &problem->c}, std::pair{d, &problem->d}})
    if (cublasStatus_t status = viewOf(*unwrap(layout), view); status != CUBLAS_STATUS_SUCCESS)
      return status;
  if (cublasStatus_t status = checkTypes(desc, *problem); status != CUBLAS_STATUS_SUCCESS)
    return status;
  problem->tf32 = desc.computeType == CUBLAS_COMPUTE_32F_FAST_TF32;
  for (auto [operation, transposed] :
       {std::pair{desc.transA, &problem->transA}, std::pair{desc.transB, &problem->transB}})
    if (cublasStatus_t status = transposeOf(operation, transposed); status != CUBLAS_STATUS_SUCCESS)
      return status;
  const MatrixView &viewA = problem->a, &viewB = problem->b;
  problem->m = problem->d.rows;
  problem->n = problem->d.cols;
  problem->k = problem->transA ? viewA.rows : viewA.cols;
  const int64_t rowsA = problem->transA ? viewA.cols : viewA.rows;
  const int64_t rowsB = problem->transB ? viewB.cols : viewB.rows;
  const int64_t colsB = problem->transB ? viewB.rows : viewB.cols;
  if (rowsA != problem->m || rowsB != problem->k || colsB != problem->n ||
      problem->c.rows != problem->m || problem->c.cols != problem->n)
    return CUBLAS_STATUS_INVALID_VALUE;
  problem->batchCount = unwrap(d)->batchCount;
  for (cublasLtMatrixLayout_t layout : {a, b, c})
    if (unwrap(layout)->batchCount != problem->batchCount)
      return CUBLAS_STATUS_INVALID_VALUE;
  // Pointer arrays for all four or for none; the simulation runs them without an epilogue.
  problem->pointerArrays = unwrap(d)->batchMode == CUBLASLT_BATCH_MODE_POINTER_ARRAY;
  for (cublasLtMatrixLayout_t layout : {a, b, c})
    if (unwrap(layout)->batchMode != unwrap(d)->batchMode)
      return CUBLAS_STATUS_NOT_SUPPORTED;
  if (problem->pointerArrays && desc.epilogue != CUBLASLT_EPILOGUE_DEFAULT)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return checkEpilogue(desc, problem);
}

/// The fp32 image of D, which the algorithm keeps in its workspace (as a split-K algorithm
/// keeps its partial sums) when it fits in maxBytes; otherwise it takes no workspace.
uint64_t workspaceFor(const MatmulProblem &problem, uint64_t maxBytes) {
  uint64_t bytes = sizeof(float);
  for (int64_t factor : {problem.m, problem.n, problem.batchCount}) {
    if (factor != 0 && bytes > maxBytes / uint64_t(factor))
      return 0;
    bytes *= uint64_t(factor);
  }
  return bytes;
}

/// The largest power of two up to 256 that divides `pointer`'s address; 256 for null.
uint64_t pointerAlignment(const void *pointer) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  uint64_t alignment = 256;
  while (address % alignment != 0)
    alignment /= 2;
  return alignment;
}

/// Null or misaligned: INVALID_VALUE, which NVIDIA returns for arguments "in conflict".
bool isAligned(const void *pointer, uint64_t alignment) {
  return pointer && reinterpret_cast<uintptr_t>(pointer) % alignment == 0;
}

/// True when `bytes` from `pointer` are device memory; otherwise faults the device, as the
/// kernel's first access outside device memory would.
bool isDeviceOperand(const char *name, const void *pointer, int64_t bytes) {
  if (bytes == 0 || isDeviceRange(pointer, size_t(bytes)))
    return true;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(pointer);
  std::ostringstream report;
  report << "cublasLtMatmul: " << name << " range [0x" << std::hex << begin << ", 0x"
         << begin + uintptr_t(bytes) << ") is not device memory";
  raiseDeviceFault(cudaErrorIllegalAddress, report.str());
  return false;
}

/// Checks the pointers against the algorithm and the problem, then each operand's whole
/// range (all batches, leading dimensions included) against device memory.
cublasStatus_t checkOperands(const MatmulProblem &problem, const AlgoRecord &algo,
                             const MatmulOperands &operands, const void *c) {
  const MatrixView auxView{problem.d.type, problem.m, problem.n, problem.auxLd,
                           problem.auxBatchStride};
  const int64_t batches = problem.batchCount;
  const bool hasBias = readsBias(problem.epilogue) || writesBiasGradient(problem.epilogue);
  const bool hasAux = usesAux(problem.epilogue);
  const int64_t biasSpan = (batches - 1) * problem.biasBatchStride + problem.biasLength;
  const size_t biasBytes = elementBytes(problem.biasType),
               outputBytes = elementBytes(problem.d.type);
  if (problem.k > 0 &&
      (!isAligned(operands.a, algo.alignment[0]) || !isAligned(operands.b, algo.alignment[1])))
    return CUBLAS_STATUS_INVALID_VALUE;
  if ((operands.c && !isAligned(operands.c, algo.alignment[2])) ||
      !isAligned(operands.d, algo.alignment[3]) ||
      (hasBias && !isAligned(operands.bias, std::max<uint64_t>(biasBytes, algo.biasAlignment))) ||
      (hasAux && !isAligned(operands.aux, outputBytes)))
    return CUBLAS_STATUS_INVALID_VALUE;
  // In place (C == D) only with one layout for both.
  if (c == operands.d &&
      (problem.c.ld != problem.d.ld || problem.c.batchStride != problem.d.batchStride))
    return CUBLAS_STATUS_INVALID_VALUE;
  const bool inDeviceMemory =
      isDeviceOperand("A", operands.a, problem.a.span(batches) * elementBytes(problem.a.type)) &&
      isDeviceOperand("B", operands.b, problem.b.span(batches) * elementBytes(problem.b.type)) &&
      (!operands.c || isDeviceOperand("C", operands.c, problem.c.span(batches) * outputBytes)) &&
      isDeviceOperand("D", operands.d, problem.d.span(batches) * outputBytes) &&
      (!hasBias || isDeviceOperand("bias", operands.bias, biasSpan * biasBytes)) &&
      (!hasAux ||
       isDeviceOperand("epilogue aux", operands.aux, auxView.span(batches) * outputBytes)) &&
      isDeviceOperand("workspace", operands.workspace, algo.workspaceBytes);
  return inDeviceMemory ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

/// Checks a pointer-array matmul's arrays (A, B, D, and C when read): each
/// problem.batchCount pointers of device memory, aligned as pointers; C's array may be D's
/// only with one layout for both.
cublasStatus_t checkPointerArrays(const MatmulProblem &problem, const MatmulOperands &operands) {
  std::vector<std::pair<const char *, const void *>> arrays = {{"A pointer array", operands.a},
                                                               {"B pointer array", operands.b},
                                                               {"D pointer array", operands.d}};
  if (operands.c)
    arrays.push_back({"C pointer array", operands.c});
  for (auto [name, array] : arrays)
    if (!isAligned(array, sizeof(void *)))
      return CUBLAS_STATUS_INVALID_VALUE;
  if (operands.c == operands.d && problem.c.ld != problem.d.ld)
    return CUBLAS_STATUS_INVALID_VALUE;
  const int64_t bytes = problem.batchCount * int64_t(sizeof(void *));
  for (auto [name, array] : arrays)
    if (!isDeviceOperand(name, array, bytes))
      return CUBLAS_STATUS_EXECUTION_FAILED;
  return CUBLAS_STATUS_SUCCESS;
}

/// Matrix `batch` of a pointer-array operand: the array's entry, faulting the device (as
/// the kernel's load would) when it is misaligned for the algorithm or its matrix is not
/// device memory; null after a fault.
const void *arrayMatrix(const char *name, const void *array, int64_t batch, const MatrixView &view,
                        uint64_t alignment) {
  const void *matrix = static_cast<const void *const *>(array)[batch];
  if (!isAligned(matrix, alignment)) {
    std::ostringstream report;
    report << "cublasLtMatmul: " << name << " of batch " << batch << " at " << matrix
           << " is not aligned to " << alignment << " bytes";
    raiseDeviceFault(cudaErrorMisalignedAddress, report.str());
    return nullptr;
  }
  const int64_t bytes = view.span(1) * int64_t(elementBytes(view.type));
  return isDeviceOperand(name, matrix, bytes) ? matrix : nullptr;
}

/// Runs a pointer-array matmul when its stream gets to it: batch by batch, each as a
/// one-matrix problem on the matrices its arrays' entries point at, stopping at a fault.
void computePointerArrayMatmul(const MatmulProblem &problem, const AlgoRecord &algo,
                               const MatmulOperands &operands) {
  MatmulProblem single = problem;
  single.batchCount = 1;
  single.pointerArrays = false;
  const int64_t workspaceBytes = problem.m * problem.n * int64_t(sizeof(float));
  for (int64_t batch = 0; batch < problem.batchCount; ++batch) {
    auto entry = [&](const char *name, const void *array, const MatrixView &view, int operand,
                     const void *&matrix) {
      matrix = arrayMatrix(name, array, batch, view, algo.alignment[operand]);
      return matrix != nullptr;
    };
    MatmulOperands matrices = operands;
    const void *d = nullptr;
    if (!entry("A", operands.a, problem.a, 0, matrices.a) ||
        !entry("B", operands.b, problem.b, 1, matrices.b) ||
        (operands.c && !entry("C", operands.c, problem.c, 2, matrices.c)) ||
        !entry("D", operands.d, problem.d, 3, d))
      return;
    matrices.d = const_cast<void *>(d);
    if (operands.workspace)
      matrices.workspace = static_cast<char *>(operands.workspace) + batch * workspaceBytes;
    computeMatmul(single, matrices);
  }
}

} // namespace
} // namespace bertc::sim::cublaslt

using namespace bertc::sim::cublaslt;

extern "C" {

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
    cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int *returnAlgoCount) {
  if (!lightHandle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!operationDesc || !Adesc || !Bdesc || !Cdesc || !Ddesc || !preference ||
      requestedAlgoCount <= 0 || !heuristicResultsArray || !returnAlgoCount)
    return CUBLAS_STATUS_INVALID_VALUE;
  *returnAlgoCount = 0;
  const MatmulDesc &desc = *unwrap(operationDesc);
  const MatmulPreference &limits = *unwrap(preference);
  MatmulProblem problem;
  if (cublasStatus_t status = describeProblem(desc, Adesc, Bdesc, Cdesc, Ddesc, &problem);
      status != CUBLAS_STATUS_SUCCESS)
    return status;

  // No algorithm reads a matrix less aligned than one of its elements.
  AlgoRecord algo{kAlgoTag, typeSignature(desc, problem), {}, 0};
  const cudaDataType_t types[4] = {problem.a.type, problem.b.type, problem.c.type, problem.d.type};
  for (int operand = 0; operand < 4; ++operand) {
    const uint32_t alignment = limits.minAlignment[operand];
    if (alignment == 0 || alignment % elementBytes(types[operand]) != 0)
      return CUBLAS_STATUS_NOT_SUPPORTED;
    algo.alignment[operand] = alignment;
  }
  algo.workspaceBytes = workspaceFor(problem, limits.maxWorkspaceBytes);
  algo.biasAlignment = pointerAlignment(desc.biasPointer);

  cublasLtMatmulHeuristicResult_t &result = heuristicResultsArray[0];
  result = {};
  std::memcpy(result.algo.data, &algo, sizeof algo);
  result.workspaceSize = algo.workspaceBytes;
  result.state = CUBLAS_STATUS_SUCCESS;
  result.wavesCount = 1.0f;
  *returnAlgoCount = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                              const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                              const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                              const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                              void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream) {
  if (!lightHandle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!computeDesc || !Adesc || !Bdesc || !Cdesc || !Ddesc || !alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  const MatmulDesc &desc = *unwrap(computeDesc);
  MatmulProblem problem;
  if (cublasStatus_t status = describeProblem(desc, Adesc, Bdesc, Cdesc, Ddesc, &problem);
      status != CUBLAS_STATUS_SUCCESS)
    return status;

  // Without an algorithm, the one the heuristic would choose for these very pointers.
  AlgoRecord chosen{kAlgoTag,
                    typeSignature(desc, problem),
                    {elementBytes(problem.a.type), elementBytes(problem.b.type),
                     elementBytes(problem.c.type), elementBytes(problem.d.type)},
                    0};
  if (algo)
    std::memcpy(&chosen, algo->data, sizeof chosen);
  if (chosen.tag != kAlgoTag || chosen.types != typeSignature(desc, problem) ||
      workspaceSizeInBytes < chosen.workspaceBytes || (chosen.workspaceBytes && !workspace))
    return CUBLAS_STATUS_INVALID_VALUE;

  const float betaValue = *static_cast<const float *>(beta);
  const MatmulOperands operands{*static_cast<const float *>(alpha),
                                betaValue,
                                A,
                                B,
                                betaValue != 0.0f ? C : nullptr,
                                D,
                                desc.biasPointer,
                                desc.auxPointer,
                                chosen.workspaceBytes ? workspace : nullptr};
  if (problem.m == 0 || problem.n == 0)
    return CUBLAS_STATUS_SUCCESS;
  if (cublasStatus_t status = problem.pointerArrays ? checkPointerArrays(problem, operands)
                                                    : checkOperands(problem, chosen, operands, C);
      status != CUBLAS_STATUS_SUCCESS)
    return status;
  // Like the GPU's kernels, a captured matmul keeps alpha and beta as they were at the call.
  cudaError_t queued = bertc::sim::submit(stream, cudaGraphNodeTypeKernel, [=] {
    if (problem.pointerArrays)
      computePointerArrayMatmul(problem, chosen, operands);
    else
      computeMatmul(problem, operands);
  });
  return queued == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

} // extern "C"
