// The arithmetic of the simulated cuBLASLt's matmul, as a GPU does it with fp32 compute:
// 16-bit inputs widened exactly to fp32 (fp32 inputs rounded to TF32 with
// CUBLAS_COMPUTE_32F_FAST_TF32), products summed in fp32 (OpenBLAS sgemm), then, per
// column of D in fp32: alpha and beta * C, the bias, the activation, and one rounding to
// D's type at the end.
#include "cublaslt_internal.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace bertc::sim::cublaslt {
namespace {

const void *elementAt(const void *base, cudaDataType_t type, int64_t offset) {
  return static_cast<const char *>(base) + offset * int64_t(elementBytes(type));
}
void *elementAt(void *base, cudaDataType_t type, int64_t offset) {
  return static_cast<char *>(base) + offset * int64_t(elementBytes(type));
}

/// A column-major fp32 matrix with its leading dimension.
struct FloatMatrix {
  const float *data;
  int64_t ld;
};

/// One batch of an operand as the multiplies see it: fp32 operands in place, 16-bit ones
/// widened (and, with `tf32`, fp32 ones rounded to TF32) into `scratch` with leading
/// dimension rows.
FloatMatrix widen(const MatrixView &view, const void *base, int64_t batch, bool tf32,
                  std::vector<float> &scratch) {
  const void *matrix = elementAt(base, view.type, batch * view.batchStride);
  if (view.type == CUDA_R_32F && !tf32)
    return {static_cast<const float *>(matrix), view.ld};
  scratch.resize(size_t(view.rows * view.cols));
  for (int64_t column = 0; column < view.cols; ++column)
    loadFloats(view.type, elementAt(matrix, view.type, column * view.ld),
               scratch.data() + column * view.rows, view.rows);
  if (tf32)
    for (float &value : scratch)
      value = roundToTf32(value);
  return {scratch.data(), view.rows};
}

/// sums[i] = x(i, 0) + x(i, 1) + ... in that order, for each of `rows` rows.
void sumRows(FloatMatrix x, int64_t rows, int64_t cols, float *sums) {
  std::fill(sums, sums + rows, 0.0f);
  for (int64_t column = 0; column < cols; ++column)
    for (int64_t row = 0; row < rows; ++row)
      sums[row] += x.data[row + column * x.ld];
}

/// sums[j] = x(0, j) + x(1, j) + ... in that order, for each of `cols` columns.
void sumColumns(FloatMatrix x, int64_t rows, int64_t cols, float *sums) {
  for (int64_t column = 0; column < cols; ++column) {
    float sum = 0.0f;
    for (int64_t row = 0; row < rows; ++row)
      sum += x.data[row + column * x.ld];
    sums[column] = sum;
  }
}

// cuBLASLt's GELU is the tanh approximation (PyTorch applies gelu(approximate="tanh") where
// it cannot use the cuBLASLt GELU epilogue): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
constexpr float kSqrtTwoOverPi = 0.7978845608028654f, kGeluCubic = 0.044715f;

float gelu(float x) {
  return 0.5f * x * (1.0f + std::tanh(kSqrtTwoOverPi * (x + kGeluCubic * x * x * x)));
}

float geluDerivative(float x) {
  const float t = std::tanh(kSqrtTwoOverPi * (x + kGeluCubic * x * x * x));
  return 0.5f * (1.0f + t) +
         0.5f * x * (1.0f - t * t) * kSqrtTwoOverPi * (1.0f + 3.0f * kGeluCubic * x * x);
}

} // namespace

void keepBlasToTheCallingThread() {
#ifdef OPENBLAS_VERSION
  openblas_set_num_threads(1);
#endif
}

/// Per batch:
///  1. acc = op(A) op(B) in fp32 (zero when k is 0), from A and B as widen() gives them;
///  2. BGRADA / BGRADB: the sums of op(A) / op(B) over k, from the same inputs;
///  3. per column of D: x = alpha acc + beta C; + bias; the activation (GELU_AUX* store its
///     input, DGELU* multiply by GELU' of the stored input, DGELU_BGRAD sums the rows of
///     the result); round to D's type;
///  4. the bias gradient, rounded to its type; with a workspace, the fp32 D is left there.
void computeMatmul(const MatmulProblem &problem, const MatmulOperands &operands) {
  thread_local std::vector<float> scratchA, scratchB, accumulator, column, bias, gradient;
  const int64_t m = problem.m, n = problem.n, k = problem.k;
  const cublasLtEpilogue_t epilogue = problem.epilogue;
  const cudaDataType_t output = problem.d.type;
  const MatrixView aux{output, m, n, problem.auxLd, problem.auxBatchStride};
  accumulator.resize(size_t(m * n));
  column.resize(size_t(m));
  bias.resize(size_t(problem.biasLength));
  gradient.resize(size_t(problem.biasLength));

  for (int64_t batch = 0; batch < problem.batchCount; ++batch) {
    float *acc = accumulator.data();
    std::fill(gradient.begin(), gradient.end(), 0.0f);
    if (k == 0) {
      std::fill(accumulator.begin(), accumulator.end(), 0.0f);
    } else {
      const FloatMatrix a = widen(problem.a, operands.a, batch, problem.tf32, scratchA);
      const FloatMatrix b = widen(problem.b, operands.b, batch, problem.tf32, scratchB);
      cblas_sgemm(CblasColMajor, problem.transA ? CblasTrans : CblasNoTrans,
                  problem.transB ? CblasTrans : CblasNoTrans, blasint(m), blasint(n), blasint(k),
                  1.0f, a.data, blasint(a.ld), b.data, blasint(b.ld), 0.0f, acc, blasint(m));
      if (epilogue == CUBLASLT_EPILOGUE_BGRADA)
        problem.transA ? sumColumns(a, k, m, gradient.data()) : sumRows(a, m, k, gradient.data());
      if (epilogue == CUBLASLT_EPILOGUE_BGRADB)
        problem.transB ? sumRows(b, n, k, gradient.data()) : sumColumns(b, k, n, gradient.data());
    }
    void *biasVector =
        operands.bias ? elementAt(operands.bias, problem.biasType, batch * problem.biasBatchStride)
                      : nullptr;
    if (readsBias(epilogue))
      loadFloats(problem.biasType, biasVector, bias.data(), m);

    for (int64_t j = 0; j < n; ++j) {
      float *x = acc + j * m;
      for (int64_t i = 0; i < m; ++i)
        x[i] *= operands.alpha;
      if (operands.c) {
        loadFloats(output,
                   elementAt(operands.c, output, batch * problem.c.batchStride + j * problem.c.ld),
                   column.data(), m);
        for (int64_t i = 0; i < m; ++i)
          x[i] += operands.beta * column[i];
      }
      if (readsBias(epilogue))
        for (int64_t i = 0; i < m; ++i)
          x[i] += bias[i];
      void *auxColumn = usesAux(epilogue)
                            ? elementAt(operands.aux, output, batch * aux.batchStride + j * aux.ld)
                            : nullptr;
      switch (epilogue) {
      case CUBLASLT_EPILOGUE_RELU:
      case CUBLASLT_EPILOGUE_RELU_BIAS:
        for (int64_t i = 0; i < m; ++i)
          x[i] = std::fmax(x[i], 0.0f); // NaN becomes 0, as with the GPU's fmaxf
        break;
      case CUBLASLT_EPILOGUE_GELU_AUX:
      case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
        storeFloats(output, x, auxColumn, m);
        [[fallthrough]];
      case CUBLASLT_EPILOGUE_GELU:
      case CUBLASLT_EPILOGUE_GELU_BIAS:
        for (int64_t i = 0; i < m; ++i)
          x[i] = gelu(x[i]);
        break;
      case CUBLASLT_EPILOGUE_DGELU:
      case CUBLASLT_EPILOGUE_DGELU_BGRAD:
        loadFloats(output, auxColumn, column.data(), m);
        for (int64_t i = 0; i < m; ++i)
          x[i] *= geluDerivative(column[i]);
        if (epilogue == CUBLASLT_EPILOGUE_DGELU_BGRAD)
          for (int64_t i = 0; i < m; ++i)
            gradient[i] += x[i];
        break;
      default:
        break;
      }
      storeFloats(output, x,
                  elementAt(operands.d, output, batch * problem.d.batchStride + j * problem.d.ld),
                  m);
    }
    if (writesBiasGradient(epilogue))
      storeFloats(problem.biasType, gradient.data(), biasVector, problem.biasLength);
    if (operands.workspace)
      std::memcpy(static_cast<char *>(operands.workspace) + batch * m * n * int64_t(sizeof(float)),
                  acc, size_t(m * n) * sizeof(float));
  }
}

} // namespace bertc::sim::cublaslt
