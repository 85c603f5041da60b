// Internal to LinearGemms (gemm.cu): a GEMM's operands as a GemmShape sees them (cuBLASLt's
// data and compute types, the alignment its algorithm may count on), and a batchedGemms call
// as cuBLASLt runs it (GroupedCall).
#pragma once

#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_gemm.h"

#include "gemm_plan.cuh"
#include "gemm_pointer_arrays.cuh"

#include <cublasLt.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace bertc::cuda {

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

/// The largest power of two (up to 256) dividing the address and the batch and group
/// strides in bytes: cuBLASLt's heuristic must not pick an algorithm that needs more
/// alignment than the arena slot, or any batch's matrix, has. (A matrix at a multiple of the
/// strides from the first then gets the same alignment, hence the same algorithm.)
inline uint32_t alignmentOf(const void *pointer, int64_t batchStrideBytes = 0,
                            int64_t groupStrideBytes = 0) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  uint32_t alignment = 256;
  while (alignment > 1 && (address % alignment != 0 || batchStrideBytes % alignment != 0 ||
                           groupStrideBytes % alignment != 0))
    alignment /= 2;
  return alignment;
}

/// A batchedGemms call as cuBLASLt runs it: the strided-batched shape of one group's
/// matrices, and every product's operands as the pointer arrays list them.
struct GroupedCall {
  GemmShape shape;
  GroupedProducts products;
  int64_t productCount;
  /// m, n, count or groups is 0: nothing runs.
  bool empty;
  /// The entry its pointer arrays start at, where fillListed filled them; else -1.
  int64_t filledEntry = -1;

  int64_t units() const { return productCount * products.groups; }
  /// Matrices over all its groups.
  int64_t matrices() const { return units() * shape.batches; }
};

template <typename T> bool sameLayout(const BatchedOperand<T> &x, const BatchedOperand<T> &y) {
  return x.ld == y.ld && x.batchStride == y.batchStride && x.transposed == y.transposed;
}
template <typename T> bool sameLayout(const BatchedOutput<T> &x, const BatchedOutput<T> &y) {
  return x.ld == y.ld && x.batchStride == y.batchStride;
}

/// Groups that share an operand's matrices: an input's groupRepeat, 1 for an output.
template <typename T> int64_t groupRepeat(const BatchedOperand<T> &x) { return x.groupRepeat; }
template <typename T> int64_t groupRepeat(const BatchedOutput<T> &) { return 1; }

/// An operand as the pointer-array fill lists it (strides in bytes), lowering `alignment`
/// to what its matrices have.
template <typename Operand> GroupedMatrices grouped(const Operand &x, uint32_t &alignment) {
  const int64_t bytes = sizeof(*x.data);
  alignment =
      std::min(alignment, alignmentOf(x.data, x.batchStride * bytes, x.groupStride * bytes));
  return {reinterpret_cast<const char *>(x.data), x.batchStride * bytes, x.groupStride * bytes,
          groupRepeat(x)};
}

/// The GroupedCall of batchedGemms' arguments.
template <typename T, typename OutT>
GroupedCall groupedCall(std::initializer_list<BatchedProduct<T, OutT>> products, int64_t m,
                        int64_t n, int64_t k, int64_t count, int64_t groups, GemmMath math) {
  static_assert(std::is_same_v<OutT, T> || std::is_same_v<OutT, float>,
                "batched GEMMs write the input type or fp32");
  if (products.size() == 0 || products.size() > size_t(kMaxBatchedProducts))
    throw std::invalid_argument("batchedGemms takes 1 to " + std::to_string(kMaxBatchedProducts) +
                                " products");
  const BatchedProduct<T, OutT> &first = *products.begin();
  // Row-major d = op(a) op(b) is column-major d^T = op(b)^T op(a)^T, so cuBLASLt's A is the
  // caller's b and its B the caller's a.
  GroupedProducts listed{};
  listed.groups = groups;
  listed.count = count;
  uint32_t alignA = 256, alignB = 256, alignD = 256;
  for (const BatchedProduct<T, OutT> &product : products) {
    if (!sameLayout(product.a, first.a) || !sameLayout(product.b, first.b) ||
        !sameLayout(product.d, first.d))
      throw std::invalid_argument(
          "batchedGemms: the products differ in a leading dimension, stride or transpose");
    const size_t index = &product - products.begin();
    listed.a[index] = grouped(product.b, alignA);
    listed.b[index] = grouped(product.a, alignB);
    listed.d[index] = grouped(product.d, alignD);
  }
  // A matrix row-major and untransposed is column-major transposed already.
  const auto operation = [](bool transposed) { return transposed ? CUBLAS_OP_T : CUBLAS_OP_N; };
  GemmShape shape{n,
                  m,
                  k,
                  first.b.ld,
                  first.a.ld,
                  first.d.ld,
                  operation(first.b.transposed),
                  operation(first.a.transposed),
                  dataType<T>(),
                  dataType<OutT>(),
                  computeType<T>(math),
                  false,
                  alignA,
                  alignB,
                  alignD};
  shape.batches = count;
  shape.strideA = first.b.batchStride;
  shape.strideB = first.a.batchStride;
  shape.strideD = first.d.batchStride;
  const bool empty = m == 0 || n == 0 || count == 0 || groups == 0;
  return {shape, listed, int64_t(products.size()), empty};
}

} // namespace bertc::cuda
