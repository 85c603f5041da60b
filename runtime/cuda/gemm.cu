// LinearGemms (cuda_gemm.h): row-major linear layers as column-major cuBLASLt matmuls.
// A row-major [r, c] matrix is a column-major [c, r] one, so with D = op(A) op(B):
//   forward          y^T [out, rows]  = (w as [in, out])^T   x^T [in, rows]
//   backward input  dx^T [in, rows]   =  w as [in, out]      dy^T [out, rows]
//   backward weight dw^T [in, out]    =  x^T [in, rows]      (dy^T as [out, rows])^T
// The attention's batched products (batchedGemms) are row-major too: D = op(A) op(B) is
// D^T = op(B)^T op(A)^T, so cuBLASLt's A is the caller's b and its B the caller's a. Their
// groups (heads) of strided batches (sequences), of one product or two of the same shape,
// are one matmul over pointer arrays that a kernel fills in the workspace's last bytes, or
// a strided-batched matmul per group.
// Each distinct (shape, types, math, transposes, epilogue, batching, pointer alignment)
// gets a matmul descriptor, layouts and an algorithm once; later calls only set the pointers.
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/cuda_gemm.h"

#include "gemm_plan.cuh"
#include "gemm_pointer_arrays.cuh"

#include <cublasLt.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

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

} // namespace

struct LinearGemms::State {
  cublasLtHandle_t handle = nullptr;
  void *workspace;
  cudaStream_t stream;
  std::map<GemmShape, GemmPlan> plans;
  GroupedCalls groupedCalls;

  ~State() {
    for (auto &[shape, plan] : plans)
      destroyGemmPlan(plan);
    if (handle)
      cublasLtDestroy(handle);
  }

  const GemmPlan &planFor(const GemmShape &shape) {
    if (auto known = plans.find(shape); known != plans.end())
      return known->second;
    return plans.emplace(shape, makeGemmPlan(handle, shape)).first->second;
  }

  /// d = a b (+ bias), queued on the stream; with `beta` 1, d = a b + c, c being d itself
  /// unless given (C has D's layout, and shape.alignD is the alignment of both). For a
  /// pointer-array shape, a, b and d are the arrays.
  void run(const GemmShape &shape, const void *a, const void *b, void *d, const void *bias,
           float beta = 0.0f, const void *c = nullptr) {
    const GemmPlan &plan = planFor(shape);
    if (shape.bias)
      setBiasPointer(plan, bias);
    const float alpha = 1.0f;
    BERTC_CUBLAS_CHECK(cublasLtMatmul(handle, plan.desc, &alpha, a, plan.a, b, plan.b, &beta,
                                      c ? c : d, plan.d, d, plan.d, &*plan.algo, workspace,
                                      kGemmWorkspaceBytes, stream));
  }

  /// The pointer arrays at the workspace's end.
  const void **pointerArrays() const {
    return reinterpret_cast<const void **>(static_cast<char *>(workspace) + kGemmWorkspaceBytes);
  }

  /// `shape` over `batches` matrices named by pointer arrays.
  static GemmShape pointerArrayShape(const GemmShape &shape, int64_t batches) {
    GemmShape grouped = shape;
    grouped.batches = batches;
    grouped.pointerArrays = true;
    grouped.strideA = grouped.strideB = grouped.strideD = 0;
    return grouped;
  }

  /// `productCount` products' `groups` groups of shape.batches strided matrices each (strides
  /// in `products`): as pointer-array matmuls of up to kMaxPointerArrayBatch matrices, each
  /// after the kernel that fills its arrays, or, where cuBLASLt has no algorithm for those,
  /// one strided-batched matmul per group.
  void runGroups(const GemmShape &shape, const GroupedProducts &products, int64_t productCount) {
    const int64_t count = shape.batches, units = productCount * products.groups;
    const int64_t unitsPerCall =
        count <= kMaxPointerArrayBatch ? std::min(units, kMaxPointerArrayBatch / count) : 1;
    int64_t first = 0;
    while (first < units && unitsPerCall > 1) {
      const int64_t total = std::min(unitsPerCall, units - first) * count;
      const GemmShape grouped = pointerArrayShape(shape, total);
      if (!planFor(grouped).algo)
        break;
      PointerArrayFill fill;
      fill.calls[0] = {products, first, total, 0};
      fill.count = 1;
      fill.entries = total;
      fillPointerArrays(pointerArrays(), fill, stream);
      ++groupedCalls.fills;
      runPointerArrays(grouped, 0);
      first += total / count;
    }
    if (first < units)
      ++groupedCalls.perGroup;
    for (int64_t unit = first; unit < units; ++unit) {
      const int64_t product = unit / products.groups, group = unit % products.groups;
      const auto at = [group](const GroupedMatrices &operand) {
        return const_cast<char *>(operand.base) + group * operand.groupStride;
      };
      run(shape, at(products.a[product]), at(products.b[product]), at(products.d[product]),
          nullptr);
    }
  }

  /// The pointer-array matmul `grouped` over the arrays filled from entry `firstEntry`.
  void runPointerArrays(const GemmShape &grouped, int64_t firstEntry) {
    const void **arrays = pointerArrays() + 3 * firstEntry;
    const int64_t total = grouped.batches;
    run(grouped, arrays, arrays + total, arrays + 2 * total, nullptr);
    ++groupedCalls.pointerArrays;
  }

  /// Runs `call`: one product of one group as one strided-batched matmul, over the arrays
  /// fillListed filled, or as runGroups runs it.
  void runCall(const GroupedCall &call) {
    if (call.empty)
      return;
    const GroupedProducts &listed = call.products;
    if (call.units() == 1)
      run(call.shape, listed.a[0].base, listed.b[0].base, const_cast<char *>(listed.d[0].base),
          nullptr);
    else if (call.filledEntry >= 0)
      runPointerArrays(pointerArrayShape(call.shape, call.matrices()), call.filledEntry);
    else
      runGroups(call.shape, listed, call.productCount);
  }

  /// The calls listed since the last fillListed (listBatchedGemms), and whether that fill
  /// has happened since they were.
  std::vector<GroupedCall> listed;
  bool listedFilled = false;

  /// Fills the arrays of every listed call that takes them (more than one unit, and
  /// cuBLASLt has a pointer-array algorithm) in one kernel, where each holds one matmul's
  /// and all fit; otherwise none, and each call fills its own as it runs (runGroups always
  /// starts at entry 0, which would overwrite the others').
  void fillListed() {
    listedFilled = true;
    PointerArrayFill fill;
    for (GroupedCall &call : listed) {
      call.filledEntry = -1;
      if (call.empty || call.units() == 1 ||
          !planFor(pointerArrayShape(call.shape, call.matrices())).algo)
        continue;
      if (call.matrices() > kMaxPointerArrayBatch - fill.entries) {
        for (GroupedCall &unfilled : listed)
          unfilled.filledEntry = -1;
        return;
      }
      call.filledEntry = fill.entries;
      fill.calls[fill.count++] = {call.products, 0, call.matrices(), fill.entries};
      fill.entries += call.matrices();
    }
    if (fill.count == 0)
      return;
    fillPointerArrays(pointerArrays(), fill, stream);
    ++groupedCalls.fills;
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

namespace {
template <typename T> bool sameLayout(const BatchedOperand<T> &x, const BatchedOperand<T> &y) {
  return x.ld == y.ld && x.batchStride == y.batchStride && x.transposed == y.transposed;
}
template <typename T> bool sameLayout(const BatchedOutput<T> &x, const BatchedOutput<T> &y) {
  return x.ld == y.ld && x.batchStride == y.batchStride;
}

/// An operand as the pointer-array fill lists it (strides in bytes), lowering `alignment`
/// to what its matrices have.
template <typename Operand> GroupedMatrices grouped(const Operand &x, uint32_t &alignment) {
  const int64_t bytes = sizeof(*x.data);
  alignment =
      std::min(alignment, alignmentOf(x.data, x.batchStride * bytes, x.groupStride * bytes));
  return {reinterpret_cast<const char *>(x.data), x.batchStride * bytes, x.groupStride * bytes};
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
} // namespace

template <typename T, typename OutT>
void LinearGemms::batchedGemms(std::initializer_list<BatchedProduct<T, OutT>> products, int64_t m,
                               int64_t n, int64_t k, int64_t count, int64_t groups, GemmMath math) {
  state->runCall(groupedCall(products, m, n, k, count, groups, math));
}

template <typename T, typename OutT>
int LinearGemms::listBatchedGemms(std::initializer_list<BatchedProduct<T, OutT>> products,
                                  int64_t m, int64_t n, int64_t k, int64_t count, int64_t groups,
                                  GemmMath math) {
  if (state->listedFilled) {
    state->listed.clear();
    state->listedFilled = false;
  }
  if (state->listed.size() == size_t(kMaxListedCalls))
    throw std::invalid_argument("listBatchedGemms lists at most " +
                                std::to_string(kMaxListedCalls) + " calls per fill");
  state->listed.push_back(groupedCall(products, m, n, k, count, groups, math));
  return int(state->listed.size()) - 1;
}

void LinearGemms::fillListed() { state->fillListed(); }

void LinearGemms::runListed(int call) {
  if (!state->listedFilled || call < 0 || size_t(call) >= state->listed.size())
    throw std::invalid_argument("runListed: call " + std::to_string(call) +
                                " was not listed before the last fillListed");
  state->runCall(state->listed[size_t(call)]);
}

template <typename T, typename OutT>
void LinearGemms::batchedGemm(const BatchedOperand<T> &a, const BatchedOperand<T> &b,
                              const BatchedOutput<OutT> &d, int64_t m, int64_t n, int64_t k,
                              int64_t count, int64_t groups, GemmMath math) {
  batchedGemms<T, OutT>({{a, b, d}}, m, n, k, count, groups, math);
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
                                         int64_t, int64_t, GemmMath);                              \
  template void LinearGemms::batchedGemms(std::initializer_list<BatchedProduct<T, OutT>>, int64_t, \
                                          int64_t, int64_t, int64_t, int64_t, GemmMath);           \
  template int LinearGemms::listBatchedGemms(std::initializer_list<BatchedProduct<T, OutT>>,       \
                                             int64_t, int64_t, int64_t, int64_t, int64_t,          \
                                             GemmMath);
INSTANTIATE(float)
INSTANTIATE(bf16)
INSTANTIATE(fp16)
INSTANTIATE_BATCHED(bf16, float)
INSTANTIATE_BATCHED(fp16, float)
#undef INSTANTIATE_BATCHED
#undef INSTANTIATE

} // namespace bertc::cuda
