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

#include "gemm_operands.cuh"
#include "gemm_plan.cuh"
#include "gemm_pointer_arrays.cuh"

#include <cublasLt.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace bertc::cuda {

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

  /// `shape`'s plan, made at its first call (with that call's bias pointer, of the shape's
  /// bias alignment).
  const GemmPlan &planFor(const GemmShape &shape, const void *bias = nullptr) {
    if (auto known = plans.find(shape); known != plans.end())
      return known->second;
    return plans.emplace(shape, makeGemmPlan(handle, shape, bias)).first->second;
  }

  /// d = a b (+ bias), queued on the stream; with `beta` 1, d = a b + c, c being d itself
  /// unless given (C has D's layout, and shape.alignD is the alignment of both). For a
  /// pointer-array shape, a, b and d are the arrays.
  void run(const GemmShape &shape, const void *a, const void *b, void *d, const void *bias,
           float beta = 0.0f, const void *c = nullptr) {
    const GemmPlan &plan = planFor(shape, bias);
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
      fill.add(products, first, total);
      queueFill(fill);
      runPointerArrays(grouped, 0);
      first += total / count;
    }
    if (first < units)
      ++groupedCalls.perGroup;
    for (int64_t unit = first; unit < units; ++unit) {
      const int64_t product = unit / products.groups, group = unit % products.groups;
      const auto at = [group](const GroupedMatrices &operand) {
        return const_cast<char *>(operand.groupBase(group));
      };
      run(shape, at(products.a[product]), at(products.b[product]), at(products.d[product]),
          nullptr);
    }
  }

  /// Queues the kernel that fills the pointer arrays of `fill`'s calls.
  void queueFill(const PointerArrayFill &fill) {
    fillPointerArrays(pointerArrays(), fill, stream);
    ++groupedCalls.fills;
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
      call.filledEntry = fill.add(call.products, 0, call.matrices());
    }
    if (fill.entries > kMaxPointerArrayBatch) {
      for (GroupedCall &call : listed)
        call.filledEntry = -1;
      return;
    }
    if (fill.count == 0)
      return;
    queueFill(fill);
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
  GemmShape shape{out,
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
  shape.alignBias = b ? alignmentOf(b) : 0;
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
void LinearGemms::gemm(const BatchedOperand<T> &a, const BatchedOperand<T> &b,
                       const BatchedOutput<OutT> &d, int64_t m, int64_t n, int64_t k, float beta,
                       GemmMath math) {
  const GroupedCall call = groupedCall<T, OutT>({{a, b, d}}, m, n, k, 1, 1, math);
  if (call.empty)
    return;
  const GroupedProducts &operands = call.products;
  state->run(call.shape, operands.a[0].base, operands.b[0].base,
             const_cast<char *>(operands.d[0].base), nullptr, beta);
}

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
  template void LinearGemms::gemm(const BatchedOperand<T> &, const BatchedOperand<T> &,            \
                                  const BatchedOutput<OutT> &, int64_t, int64_t, int64_t, float,   \
                                  GemmMath);                                                       \
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
