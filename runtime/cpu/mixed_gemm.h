// Internal to the CPU kernels: C = alpha op(A) op(B) + beta C where each of A, B and C may
// be stored as float, bf16 or fp16 and the products accumulate in fp32. All-float calls go
// straight to cblas_sgemm. Otherwise the product is computed by blocks:
//   1. an fp32 accumulator block of C (MB x NB) starts as beta C;
//   2. for each KB-deep slice, the blocks of op(A) and op(B) are converted to fp32 tiles
//      and cblas_sgemm adds their product onto the accumulator;
//   3. the accumulator is rounded once into C.
// The tiles are fixed-size thread-local arrays, so the kernels still allocate nothing.
// splitGemm shares a large GEMM's blocks of C among the threads.
#pragma once

#include "bertc/runtime/half_types.h"

#include "parallel.h"

#include <algorithm>
#include <cblas.h>
#include <cstdint>
#include <type_traits>

namespace bertc::cpu {

namespace gemm_tiles {
constexpr int64_t kRows = 128, kCols = 128, kDepth = 256;
} // namespace gemm_tiles

/// Row-major C[m, n] = alpha op(A)[m, k] op(B)[k, n] + beta C, op(X) = X^T when trans.
template <typename TA, typename TB, typename TC>
void mixedGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const TA *a,
               int64_t lda, const TB *b, int64_t ldb, float beta, TC *c, int64_t ldc) {
  if constexpr (std::is_same_v<TA, float> && std::is_same_v<TB, float> &&
                std::is_same_v<TC, float>) {
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, blasint(m), blasint(n), blasint(k), alpha, a,
                blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
  } else {
    using namespace gemm_tiles;
    thread_local float aTile[kRows * kDepth], bTile[kDepth * kCols], accumulator[kRows * kCols];
    for (int64_t i0 = 0; i0 < m; i0 += kRows) {
      const int64_t rows = std::min(kRows, m - i0);
      for (int64_t j0 = 0; j0 < n; j0 += kCols) {
        const int64_t cols = std::min(kCols, n - j0);
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j)
            accumulator[i * cols + j] =
                beta == 0.0f ? 0.0f : beta * toFloat(c[(i0 + i) * ldc + j0 + j]);
        for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
          const int64_t depth = std::min(kDepth, k - k0);
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t p = 0; p < depth; ++p)
              aTile[i * depth + p] =
                  toFloat(transA ? a[(k0 + p) * lda + i0 + i] : a[(i0 + i) * lda + k0 + p]);
          for (int64_t p = 0; p < depth; ++p)
            for (int64_t j = 0; j < cols; ++j)
              bTile[p * cols + j] =
                  toFloat(transB ? b[(j0 + j) * ldb + k0 + p] : b[(k0 + p) * ldb + j0 + j]);
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(rows), blasint(cols),
                      blasint(depth), alpha, aTile, blasint(depth), bTile, blasint(cols), 1.0f,
                      accumulator, blasint(cols));
        }
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j)
            c[(i0 + i) * ldc + j0 + j] = fromFloat<TC>(accumulator[i * cols + j]);
      }
    }
  }
}

/// Rows (or columns) of C one thread multiplies at a time, in a GEMM of at least
/// kSplitGemmWork multiply-adds (smaller ones are one call).
constexpr int64_t kGemmBlock = 128, kSplitGemmWork = int64_t(1) << 21;

/// mixedGemm with C split in blocks of kGemmBlock rows (of columns when C has more columns
/// than rows) that the threads share. The blocks depend on the shape alone, and each block
/// is a whole GEMM over all of k, so the result does not depend on the thread count.
template <typename TA, typename TB, typename TC>
void splitGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const TA *a,
               int64_t lda, const TB *b, int64_t ldb, float beta, TC *c, int64_t ldc) {
  if (m * n * k < kSplitGemmWork) {
    mixedGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if (m >= n) {
    forEachChunk(m, kGemmBlock, [&](int64_t rowBegin, int64_t rowEnd) {
      mixedGemm(transA, transB, rowEnd - rowBegin, n, k, alpha,
                transA ? a + rowBegin : a + rowBegin * lda, lda, b, ldb, beta, c + rowBegin * ldc,
                ldc);
    });
  } else {
    forEachChunk(n, kGemmBlock, [&](int64_t colBegin, int64_t colEnd) {
      mixedGemm(transA, transB, m, colEnd - colBegin, k, alpha, a, lda,
                transB ? b + colBegin * ldb : b + colBegin, ldb, beta, c + colBegin, ldc);
    });
  }
}

} // namespace bertc::cpu
