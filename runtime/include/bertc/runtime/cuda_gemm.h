// The linear layers of a CUDA trainer through cuBLASLt, with the CPU twins' layouts
// (torch.nn.Linear: w is [out, in], row-major): the forward with its bias fused as the
// GEMM's epilogue, and the two backward GEMMs. Inputs are the storage type T (float, bf16
// or fp16); every GEMM accumulates in fp32 (CUBLAS_COMPUTE_32F; fp32 GEMMs of a plan made
// with --tf32 ask for GemmMath::Tf32, CUBLAS_COMPUTE_32F_FAST_TF32), weight gradients
// are fp32. BERT's GELU is the erf form, which cuBLASLt's GELU epilogue (the tanh
// approximation) is not, so a linear followed by GELU is this forward then cuda::geluForward;
// a tanh GELU too is its own launch (cuda::geluTanhForward), the formula its CPU twin shares.
// The tensor-core attention's per-head products go through the same object, as batched
// GEMMs over (head, sequence) (batchedGemm).
#pragma once

#include "bertc/abi/kernel_workspace.h"
#include "bertc/runtime/half_types.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>

namespace bertc::cuda {

/// How a GEMM multiplies: fp32 on CUDA cores for fp32 operands (16-bit ones on tensor
/// cores), or, for fp32 operands only, rounded to TF32 on tensor cores (sm_80 and newer),
/// accumulating in fp32 either way.
enum class GemmMath { Fp32, Tf32 };

/// An input of LinearGemms::batchedGemm: matrix i of group g at data + (g / groupRepeat) *
/// groupStride + i * batchStride, row-major with rows ld elements apart, multiplied
/// transposed when `transposed`. groupRepeat consecutive groups read the same matrices
/// (grouped-query attention's key/value heads, read in place by each query head of their
/// group).
template <typename T> struct BatchedOperand {
  const T *data;
  int64_t ld, batchStride;
  bool transposed;
  int64_t groupStride = 0;
  int64_t groupRepeat = 1;
};

/// The output of LinearGemms::batchedGemm: matrix i of group g at data + g * groupStride +
/// i * batchStride, row-major with rows ld elements apart.
template <typename T> struct BatchedOutput {
  T *data;
  int64_t ld, batchStride;
  int64_t groupStride = 0;
};

/// One product of LinearGemms::batchedGemms: d = op(a) op(b) per matrix.
template <typename T, typename OutT> struct BatchedProduct {
  BatchedOperand<T> a, b;
  BatchedOutput<OutT> d;
};

/// The most products one batchedGemms call runs together (the attention backward's pairs).
constexpr int kMaxBatchedProducts = 2;

/// Matrices one pointer-array GEMM takes at most: LinearGemms keeps its three pointer arrays
/// (A, B, D) in 3 * 8 * kMaxPointerArrayBatch bytes of its workspace, before the column
/// sums' tickets (abi/kernel_workspace.h), and gives cuBLASLt the rest.
constexpr int64_t kMaxPointerArrayBatch = 8192;

/// The most calls whose pointer arrays one kernel fills (LinearGemms::listBatchedGemms).
constexpr int kMaxListedCalls = 3;

/// The linear-layer and attention GEMMs queued on one stream: a cuBLASLt handle, the caller's
/// workspace, and each shape's algorithm, chosen by cuBLASLt's heuristic the first time the shape
/// is seen (the first step) and reused after. Failures throw CudaError.
class LinearGemms {
public:
  /// `workspace`: kCudaWorkspaceBytes (abi/kernel_workspace.h) of device memory, an arena slot.
  LinearGemms(void *workspace, cudaStream_t stream);
  ~LinearGemms();
  LinearGemms(const LinearGemms &) = delete;
  LinearGemms &operator=(const LinearGemms &) = delete;

  /// y[rows, out] = x[rows, in] w[out, in]^T + b[out]; b may be null (no bias).
  /// GemmMath::Tf32 needs T = float.
  template <typename T>
  void linearForward(const T *x, const T *w, const T *b, T *y, int64_t rows, int64_t in,
                     int64_t out, GemmMath math = GemmMath::Fp32);
  /// dx[rows, in] = dy[rows, out] w[out, in].
  template <typename T>
  void linearBackwardInput(const T *dy, const T *w, T *dx, int64_t rows, int64_t in, int64_t out,
                           GemmMath math = GemmMath::Fp32);
  /// dx[rows, in] = dy[rows, out] w[out, in] + addend[rows, in]: the same GEMM with beta = 1
  /// and the addend as C (rounded once; dx may be the addend).
  template <typename T>
  void linearBackwardInputAdd(const T *dy, const T *w, const T *addend, T *dx, int64_t rows,
                              int64_t in, int64_t out, GemmMath math = GemmMath::Fp32);
  /// dw[out, in] = dy[rows, out]^T x[rows, in], overwritten.
  template <typename T>
  void linearBackwardWeight(const T *dy, const T *x, float *dw, int64_t rows, int64_t in,
                            int64_t out, GemmMath math = GemmMath::Fp32);
  /// dw[out, in] += dy[rows, out]^T x[rows, in]: the same GEMM with beta = 1, its output a
  /// gradient slot (C = D).
  template <typename T>
  void linearBackwardWeightAccumulate(const T *dy, const T *x, float *dw, int64_t rows, int64_t in,
                                      int64_t out, GemmMath math = GemmMath::Fp32);

  /// d[m, n] = op(a)[m, k] op(b)[k, n] + beta d for one matrix of each operand (their
  /// strides unused), row-major with the operands' own leading dimensions: products outside
  /// a linear layer's layouts (the LM head loss's, over a block of its workspace). beta is
  /// 0 (d overwritten) or 1 (d accumulates: C = D). OutT is T or float; GemmMath::Tf32
  /// needs T = float.
  template <typename T, typename OutT>
  void gemm(const BatchedOperand<T> &a, const BatchedOperand<T> &b, const BatchedOutput<OutT> &d,
            int64_t m, int64_t n, int64_t k, float beta = 0.0f, GemmMath math = GemmMath::Fp32);

  /// For each group g < groups and i < count: d_gi[m, n] = op(a_gi)[m, k] op(b_gi)[k, n],
  /// overwritten, every matrix row-major with its own leading dimension and strides (the
  /// attention's products: a group per head, a matrix per sequence). One group is one
  /// strided-batched cuBLASLt call; more are one pointer-array call (its arrays filled by a
  /// kernel first) for up to kMaxPointerArrayBatch matrices, or, where cuBLASLt has no
  /// pointer-array algorithm, a strided-batched call per group. OutT is T or float;
  /// GemmMath::Tf32 needs T = float.
  template <typename T, typename OutT>
  void batchedGemm(const BatchedOperand<T> &a, const BatchedOperand<T> &b,
                   const BatchedOutput<OutT> &d, int64_t m, int64_t n, int64_t k, int64_t count,
                   int64_t groups = 1, GemmMath math = GemmMath::Fp32);
  /// batchedGemm for up to kMaxBatchedProducts products at once, as one pointer-array call
  /// over all their groups (or split, or per group, as batchedGemm). The products share the
  /// shape, and each operand's leading dimension, batch stride and transpose; their data and
  /// group strides may differ. Anything else throws invalid_argument.
  template <typename T, typename OutT>
  void batchedGemms(std::initializer_list<BatchedProduct<T, OutT>> products, int64_t m, int64_t n,
                    int64_t k, int64_t count, int64_t groups, GemmMath math = GemmMath::Fp32);

  /// batchedGemms in two halves, so that one kernel fills the pointer arrays of up to
  /// kMaxListedCalls calls (the products of one chunk of the attention's heads, whose row
  /// kernel runs between them): listBatchedGemms notes a call (batchedGemms' arguments) and
  /// returns its number, counting from 0 after each fillListed; fillListed queues that
  /// fill for every call listed since the previous one; runListed runs a listed call, in
  /// any order after the fill. The arrays are the workspace's, so no batched GEMM may run
  /// between fillListed and the last runListed. Where the calls' matrices do not fit
  /// kMaxPointerArrayBatch together, each call fills its own as it runs, as batchedGemms.
  template <typename T, typename OutT>
  int listBatchedGemms(std::initializer_list<BatchedProduct<T, OutT>> products, int64_t m,
                       int64_t n, int64_t k, int64_t count, int64_t groups,
                       GemmMath math = GemmMath::Fp32);
  void fillListed();
  void runListed(int call);

  /// How batchedGemm has run groups so far: calls over pointer arrays, kernels that filled
  /// pointer arrays, and calls that ran a strided-batched GEMM per group (cuBLASLt offered
  /// no pointer-array algorithm, or a group held more than kMaxPointerArrayBatch matrices).
  struct GroupedCalls {
    int64_t pointerArrays = 0, fills = 0, perGroup = 0;
  };
  GroupedCalls groupedCalls() const;

  /// The stream the GEMMs are queued on (kernels that feed them or read them queue there too).
  cudaStream_t stream() const;

private:
  struct State;
  std::unique_ptr<State> state;
};

} // namespace bertc::cuda
