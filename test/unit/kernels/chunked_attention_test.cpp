// Tests of the tensor-core attention's CPU twin (chunkedAttentionForward/Backward) in fp32,
// bf16 and fp16: against the fused CPU kernels on the same inputs (padding, a sequence with
// every key masked, dropout 0 and 0.1, an odd length of 37, 4 heads), identical bits for head
// chunks of 1, 3 (a partial last chunk) and 4, the fp32 backward against finite differences,
// and nothing written past the exactly sized workspaces.
//
// Tolerances against the fused kernels: in fp32 the two differ only by rounding (the fused
// scales inside the GEMM and normalises by the row sum; the twin adds with fma and takes
// exp(s - lse)), so 1e-6 absolute and relative (they differ by about 1e-7). In 16 bits the twin
// also rounds P*Z and dS to T before the products that read them, each within u = 2^-8 (bf16) or
// 2^-11 (fp16) of its value, so an output may move by u times the sum of the magnitudes its product
// adds (u sum_j |P_ij Z_ij| |v_j| for ctx, from a double reference of P), and both outputs are then
// rounded once to T (2u of the value).
#include "bertc/abi/kernel_workspace.h"
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <type_traits>

using namespace bertc;
using namespace bertc::cpu;
using bertc::test::expectGradientNear;
using bertc::test::numericGradient;
using bertc::test::randomTensor;

namespace {
constexpr DropoutKey kKey{5, 9, 2, 0};
constexpr int64_t kBatch = 3, kSeq = 37, kHidden = 32, kHeads = 4, kHeadDim = kHidden / kHeads;
constexpr int64_t kSize = kBatch * kSeq * kHidden, kRows = kBatch * kHeads * kSeq;

/// The unit roundoff of T: 0 for fp32, whose rounding the tolerances' fp32 part covers.
template <typename T> constexpr double kUnitRoundoff = 0;
template <> constexpr double kUnitRoundoff<bf16> = 1.0 / 256;
template <> constexpr double kUnitRoundoff<fp16> = 1.0 / 2048;
constexpr double kFloatTolerance = 1e-6;

template <typename T> std::vector<T> narrow(const std::vector<float> &values) {
  std::vector<T> result;
  for (float value : values)
    result.push_back(fromFloat<T>(value));
  return result;
}

template <typename T> std::vector<float> widen(const std::vector<T> &values) {
  std::vector<float> result;
  for (T value : values)
    result.push_back(toFloat(value));
  return result;
}

template <typename T> bool sameBits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// Sequence 0 pads its last 5 keys and masks key 10, sequence 1 sees every key, sequence 2
/// none (every row of it is fully masked: uniform probabilities).
std::vector<int32_t> paddingMask() {
  std::vector<int32_t> mask(kBatch * kSeq, 1);
  for (int64_t j = kSeq - 5; j < kSeq; ++j)
    mask[j] = 0;
  mask[10] = 0;
  std::fill(mask.begin() + 2 * kSeq, mask.end(), 0);
  return mask;
}

/// Offset of element c of head h of token i of sequence b in a [batch, seq, hidden] tensor.
int64_t at(int64_t b, int64_t i, int64_t h, int64_t c) {
  return (b * kSeq + i) * kHidden + h * kHeadDim + c;
}

template <typename T> struct Forward {
  std::vector<T> ctx;
  std::vector<float> lse;
};
template <typename T> struct Gradients {
  std::vector<T> dq, dk, dv;
};

/// One attention problem, its inputs stored as T.
template <typename T> struct Problem {
  float rate;
  std::vector<T> q = narrow<T>(randomTensor(kSize, 30)), k = narrow<T>(randomTensor(kSize, 31));
  std::vector<T> v = narrow<T>(randomTensor(kSize, 32)), dctx = narrow<T>(randomTensor(kSize, 33));
  std::vector<int32_t> mask = paddingMask();

  Forward<T> chunkedForward(int64_t headChunk) const {
    Forward<T> out{std::vector<T>(kSize), std::vector<float>(kRows)};
    std::vector<float> workspace(cuda::attentionForwardWorkspaceBytes(headChunk, kBatch, kSeq) /
                                 sizeof(float));
    chunkedAttentionForward(q.data(), k.data(), v.data(), mask.data(), out.ctx.data(),
                            out.lse.data(), workspace.data(), headChunk, kBatch, kSeq, kHidden,
                            kHeads, rate, kKey);
    return out;
  }
  Forward<T> fusedForward() const {
    Forward<T> out{std::vector<T>(kSize), std::vector<float>(kRows)};
    std::vector<float> scratch(attentionScratchFloats(kSeq));
    attentionForward(q.data(), k.data(), v.data(), mask.data(), out.ctx.data(), out.lse.data(),
                     scratch.data(), kBatch, kSeq, kHidden, kHeads, rate, kKey);
    return out;
  }
  Gradients<T> chunkedBackward(const Forward<T> &forward, int64_t headChunk) const {
    Gradients<T> out{std::vector<T>(kSize), std::vector<T>(kSize), std::vector<T>(kSize)};
    std::vector<float> workspace(
        cuda::attentionBackwardWorkspaceBytes(headChunk, kBatch, kHeads, kSeq, rate > 0) /
        sizeof(float));
    chunkedAttentionBackward(dctx.data(), q.data(), k.data(), v.data(), mask.data(),
                             forward.ctx.data(), forward.lse.data(), workspace.data(),
                             out.dq.data(), out.dk.data(), out.dv.data(), headChunk, kBatch, kSeq,
                             kHidden, kHeads, rate, kKey);
    return out;
  }
  Gradients<T> fusedBackward(const Forward<T> &forward) const {
    Gradients<T> out{std::vector<T>(kSize), std::vector<T>(kSize), std::vector<T>(kSize)};
    std::vector<float> scratch(attentionScratchFloats(kSeq));
    attentionBackward(dctx.data(), q.data(), k.data(), v.data(), mask.data(), forward.ctx.data(),
                      forward.lse.data(), out.dq.data(), out.dk.data(), out.dv.data(),
                      scratch.data(), kBatch, kSeq, kHidden, kHeads, rate, kKey);
    return out;
  }
};

/// The textbook attention in double on a problem's stored inputs, for the tolerances: per
/// (b, h) the [seq, seq] probabilities P (masked keys 0, uniform in a fully masked row),
/// dropout factors Z and scores' gradient dS, at ((b * heads + h) * seq + i) * seq + j.
struct Reference {
  std::vector<double> probs, factors, gradScores;

  template <typename T> explicit Reference(const Problem<T> &problem) {
    const std::vector<float> q = widen(problem.q), k = widen(problem.k), v = widen(problem.v),
                             dctx = widen(problem.dctx);
    const double scale = 1.0 / std::sqrt(double(kHeadDim));
    std::vector<double> scores(kSeq), probGrads(kSeq);
    for (int64_t b = 0; b < kBatch; ++b) {
      const int32_t *mask = problem.mask.data() + b * kSeq;
      const bool anyKey = std::any_of(mask, mask + kSeq, [](int32_t m) { return m != 0; });
      for (int64_t h = 0; h < kHeads; ++h)
        for (int64_t i = 0; i < kSeq; ++i) {
          double maxScore = -INFINITY, sum = 0.0, rowTerm = 0.0;
          for (int64_t j = 0; j < kSeq; ++j) {
            double dot = 0.0;
            for (int64_t c = 0; c < kHeadDim; ++c)
              dot += double(q[at(b, i, h, c)]) * k[at(b, j, h, c)];
            scores[j] = anyKey && mask[j] == 0 ? -INFINITY : dot * scale;
            maxScore = std::max(maxScore, scores[j]);
          }
          for (int64_t j = 0; j < kSeq; ++j)
            sum += scores[j] = std::exp(scores[j] - maxScore);
          const int64_t first = int64_t(probs.size());
          for (int64_t j = 0; j < kSeq; ++j) {
            const bool keep =
                dropoutKeep(kKey, b, uint64_t((h * kSeq + i) * kSeq + j), problem.rate);
            probs.push_back(scores[j] / sum);
            factors.push_back(keep ? 1.0 / (1.0 - double(problem.rate)) : 0.0);
            double dot = 0.0;
            for (int64_t c = 0; c < kHeadDim; ++c)
              dot += double(dctx[at(b, i, h, c)]) * v[at(b, j, h, c)];
            probGrads[j] = dot * factors.back();
            rowTerm += probs.back() * probGrads[j];
          }
          for (int64_t j = 0; j < kSeq; ++j)
            gradScores.push_back(probs[first + j] * (probGrads[j] - rowTerm) * scale);
        }
    }
  }

  /// P*Z, the probabilities the forward multiplies v by.
  std::vector<double> kept() const {
    std::vector<double> result(probs.size());
    for (size_t e = 0; e < probs.size(); ++e)
      result[e] = probs[e] * factors[e];
    return result;
  }

  /// For each element (b, i, h, c) of a [batch, seq, hidden] product out = M x, M one of the
  /// [seq, seq] matrices (transposed when asked): sum_j |M_ij| |x_jc|.
  std::vector<double> magnitudeSums(const std::vector<double> &matrices, bool transpose,
                                    const std::vector<float> &x) const {
    std::vector<double> sums(kSize, 0.0);
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t h = 0; h < kHeads; ++h)
        for (int64_t i = 0; i < kSeq; ++i)
          for (int64_t j = 0; j < kSeq; ++j) {
            const int64_t pair = (b * kHeads + h) * kSeq * kSeq;
            const double m = std::abs(matrices[pair + (transpose ? j * kSeq + i : i * kSeq + j)]);
            for (int64_t c = 0; c < kHeadDim; ++c)
              sums[at(b, i, h, c)] += m * std::abs(x[at(b, j, h, c)]);
          }
    return sums;
  }
};

/// The twin's output against the fused kernel's: within kFloatTolerance plus, in 16 bits, the
/// rounding of the matrix the product read (u `magnitudes`) and of both outputs (2u).
template <typename T>
void expectNearFused(const std::vector<T> &chunked, const std::vector<T> &fused,
                     const std::vector<double> &magnitudes, const char *what) {
  const double u = kUnitRoundoff<T>;
  const std::vector<float> actual = widen(chunked), expected = widen(fused);
  for (int64_t e = 0; e < kSize; ++e) {
    const double tolerance = kFloatTolerance * (1.0 + std::abs(expected[e])) + u * magnitudes[e] +
                             2.0 * u * std::abs(expected[e]);
    ASSERT_NEAR(actual[e], expected[e], tolerance) << what << "[" << e << "]";
  }
}

template <typename T> class ChunkedAttention : public ::testing::Test {};
using StorageTypes = ::testing::Types<float, bf16, fp16>;
TYPED_TEST_SUITE(ChunkedAttention, StorageTypes);
} // namespace

TYPED_TEST(ChunkedAttention, ForwardMatchesFusedKernel) {
  for (float rate : {0.0f, 0.1f}) {
    SCOPED_TRACE(rate);
    const Problem<TypeParam> problem{rate};
    const Reference reference(problem);
    const Forward<TypeParam> chunked = problem.chunkedForward(3), fused = problem.fusedForward();
    for (int64_t r = 0; r < kRows; ++r)
      ASSERT_NEAR(chunked.lse[r], fused.lse[r], kFloatTolerance) << "lse[" << r << "]";
    EXPECT_EQ(chunked.lse.back(), -FLT_MAX) << "a fully masked row's lse";
    expectNearFused(chunked.ctx, fused.ctx,
                    reference.magnitudeSums(reference.kept(), false, widen(problem.v)), "ctx");
  }
}

// Both backwards read the same ctx and lse (the twin's forward's).
TYPED_TEST(ChunkedAttention, BackwardMatchesFusedKernel) {
  for (float rate : {0.0f, 0.1f}) {
    SCOPED_TRACE(rate);
    const Problem<TypeParam> problem{rate};
    const Reference reference(problem);
    const Forward<TypeParam> forward = problem.chunkedForward(3);
    const Gradients<TypeParam> chunked = problem.chunkedBackward(forward, 3);
    const Gradients<TypeParam> fused = problem.fusedBackward(forward);
    const auto &dS = reference.gradScores;
    expectNearFused(chunked.dq, fused.dq, reference.magnitudeSums(dS, false, widen(problem.k)),
                    "dq");
    expectNearFused(chunked.dk, fused.dk, reference.magnitudeSums(dS, true, widen(problem.q)),
                    "dk");
    expectNearFused(chunked.dv, fused.dv,
                    reference.magnitudeSums(reference.kept(), true, widen(problem.dctx)), "dv");
  }
}

TYPED_TEST(ChunkedAttention, HeadChunksGiveIdenticalBits) {
  for (float rate : {0.0f, 0.1f}) {
    SCOPED_TRACE(rate);
    const Problem<TypeParam> problem{rate};
    const Forward<TypeParam> whole = problem.chunkedForward(kHeads);
    const Gradients<TypeParam> wholeGrads = problem.chunkedBackward(whole, kHeads);
    for (int64_t headChunk : {1, 3}) {
      SCOPED_TRACE(headChunk);
      const Forward<TypeParam> forward = problem.chunkedForward(headChunk);
      const Gradients<TypeParam> grads = problem.chunkedBackward(whole, headChunk);
      EXPECT_TRUE(sameBits(forward.ctx, whole.ctx));
      EXPECT_TRUE(sameBits(forward.lse, whole.lse));
      EXPECT_TRUE(sameBits(grads.dq, wholeGrads.dq));
      EXPECT_TRUE(sameBits(grads.dk, wholeGrads.dk));
      EXPECT_TRUE(sameBits(grads.dv, wholeGrads.dv));
    }
  }
}

// Guard values after an exactly sized workspace must come back untouched, for every chunk.
TYPED_TEST(ChunkedAttention, WritesNothingPastItsWorkspace) {
  const Problem<TypeParam> problem{0.1f};
  const float guard = -12345.0f;
  for (int64_t headChunk : {1, 3, 4}) {
    const int64_t forwardFloats =
        cuda::attentionForwardWorkspaceBytes(headChunk, kBatch, kSeq) / sizeof(float);
    const int64_t backwardFloats =
        cuda::attentionBackwardWorkspaceBytes(headChunk, kBatch, kHeads, kSeq, problem.rate > 0) /
        sizeof(float);
    std::vector<float> forwardSpace(forwardFloats + 64, guard);
    std::vector<float> backwardSpace(backwardFloats + 64, guard), lse(kRows);
    std::vector<TypeParam> ctx(kSize), dq(kSize), dk(kSize), dv(kSize);
    chunkedAttentionForward(problem.q.data(), problem.k.data(), problem.v.data(),
                            problem.mask.data(), ctx.data(), lse.data(), forwardSpace.data(),
                            headChunk, kBatch, kSeq, kHidden, kHeads, problem.rate, kKey);
    chunkedAttentionBackward(problem.dctx.data(), problem.q.data(), problem.k.data(),
                             problem.v.data(), problem.mask.data(), ctx.data(), lse.data(),
                             backwardSpace.data(), dq.data(), dk.data(), dv.data(), headChunk,
                             kBatch, kSeq, kHidden, kHeads, problem.rate, kKey);
    for (int64_t i = forwardFloats; i < int64_t(forwardSpace.size()); ++i)
      ASSERT_EQ(forwardSpace[i], guard) << "forward, head chunk " << headChunk << ", [" << i << "]";
    for (int64_t i = backwardFloats; i < int64_t(backwardSpace.size()); ++i)
      ASSERT_EQ(backwardSpace[i], guard)
          << "backward, head chunk " << headChunk << ", [" << i << "]";
  }
}

// The fp32 agreement with the fused kernel also checks every dropout decision: one decision
// that differed would move ctx_i by keptScale P_ij v_j, for every probability (masked keys,
// whose P is 0, aside) more than ten times the tolerance allows.
TEST(ChunkedAttention, DropoutDecisionsAreTheFusedKernels) {
  const Problem<float> problem{0.1f};
  const Reference reference(problem);
  const double keptScale = 1.0 / (1.0 - 0.1);
  double smallestEffect = INFINITY;
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t i = 0; i < kSeq; ++i)
        for (int64_t j = 0; j < kSeq; ++j) {
          const double p = reference.probs[((b * kHeads + h) * kSeq + i) * kSeq + j];
          if (p == 0.0)
            continue;
          double largest = 0.0;
          for (int64_t c = 0; c < kHeadDim; ++c)
            largest = std::max(largest, std::abs(double(problem.v[at(b, j, h, c)])));
          smallestEffect = std::min(smallestEffect, keptScale * p * largest);
        }
  const Forward<float> chunked = problem.chunkedForward(3), fused = problem.fusedForward();
  double largestCtx = 0.0;
  for (int64_t e = 0; e < kSize; ++e) {
    ASSERT_NEAR(chunked.ctx[e], fused.ctx[e], kFloatTolerance * (1.0 + std::abs(fused.ctx[e])));
    largestCtx = std::max(largestCtx, std::abs(double(fused.ctx[e])));
  }
  EXPECT_GT(smallestEffect, 10.0 * kFloatTolerance * (1.0 + largestCtx));
}

// L = sum dctx . ctx through the twin's forward (head chunk 3, so a partial chunk). A fully
// masked row's scores are -FLT_MAX whatever q and k, so finite differences see no gradient
// there, while the kernels (like the fused ones and PyTorch's autograd of the rounded
// forward) back-propagate through its uniform probabilities: dq and dk of sequence 2 are
// checked against the fused kernel above instead.
TEST(ChunkedAttention, BackwardMatchesFiniteDifferences) {
  for (float rate : {0.0f, 0.1f}) {
    SCOPED_TRACE(rate);
    Problem<float> problem{rate};
    const Gradients<float> grads = problem.chunkedBackward(problem.chunkedForward(3), 3);
    auto forward = [&] { return problem.chunkedForward(3).ctx; };
    const int64_t visible = 2 * kSeq * kHidden; // sequences 0 and 1
    auto firstSequences = [&](const auto &values) {
      return std::vector<typename std::decay_t<decltype(values)>::value_type>(
          values.begin(), values.begin() + visible);
    };
    expectGradientNear(firstSequences(grads.dq),
                       firstSequences(numericGradient(problem.q, problem.dctx, forward)), "dq");
    expectGradientNear(firstSequences(grads.dk),
                       firstSequences(numericGradient(problem.k, problem.dctx, forward)), "dk");
    expectGradientNear(grads.dv, numericGradient(problem.v, problem.dctx, forward), "dv");
  }
}
