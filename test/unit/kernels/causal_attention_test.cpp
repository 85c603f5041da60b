// Tests of the CPU attention kernels with grouped-query heads and the causal, document-masked
// mask (a decoder's attention), fused and chunked: ctx and lse against a naive double
// reference written here (explicit loops, query head h reading key/value head
// h / (heads / kvHeads) as transformers' repeat_kv, key j visible to query i iff j <= i and
// mask[j] == mask[i] != 0), the backward against finite differences, the two kernels against
// each other in fp32 and bf16, packed documents against each document alone, padded queries
// adding exactly nothing, grouped heads against the same keys and values repeated per query
// head, and nothing written past the exactly sized scratch and workspaces.
#include "bertc/abi/kernel_workspace.h"
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>

using namespace bertc;
using namespace bertc::cpu;
using bertc::test::expectGradientNear;
using bertc::test::numericGradient;
using bertc::test::randomTensor;

namespace {
constexpr DropoutKey kKey{7, 2, 13, 0};

/// One problem: q [batch, seq, heads * d], k and v [batch, seq, kvHeads * d], mask [batch,
/// seq], in fp32; run fused (headChunk 0) or chunked.
struct Problem {
  int64_t batch, seq, heads, kvHeads, headDim;
  bool causal;
  float rate;
  std::vector<int32_t> mask;
  std::vector<float> q = randomTensor(queryFloats(), 40), k = randomTensor(keyFloats(), 41),
                     v = randomTensor(keyFloats(), 42);

  int64_t hidden() const { return heads * headDim; }
  int64_t kvHidden() const { return kvHeads * headDim; }
  int64_t queryFloats() const { return batch * seq * hidden(); }
  int64_t keyFloats() const { return batch * seq * kvHidden(); }
  AttentionHeads attentionHeads() const { return {heads, kvHeads, causal}; }
  int64_t scratchFloats() const {
    return attentionScratchFloats(seq, kvHeads < heads ? headDim : 0);
  }

  /// ctx, and lse when asked.
  std::vector<float> forward(int64_t headChunk, std::vector<float> *lse = nullptr) const {
    std::vector<float> ctx(queryFloats()), rowLse(batch * heads * seq);
    if (headChunk == 0) {
      std::vector<float> scratch(scratchFloats());
      attentionForward(q.data(), k.data(), v.data(), mask.data(), ctx.data(), rowLse.data(),
                       scratch.data(), batch, seq, hidden(), attentionHeads(), rate, kKey);
    } else {
      std::vector<float> workspace(cuda::attentionForwardWorkspaceBytes(headChunk, batch, seq) /
                                   sizeof(float));
      chunkedAttentionForward(q.data(), k.data(), v.data(), mask.data(), ctx.data(), rowLse.data(),
                              workspace.data(), headChunk, batch, seq, hidden(), attentionHeads(),
                              rate, kKey);
    }
    if (lse)
      *lse = rowLse;
    return ctx;
  }

  struct Gradients {
    std::vector<float> dq, dk, dv;
  };
  /// dq, dk, dv from this kernel's own forward.
  Gradients backward(const std::vector<float> &dctx, int64_t headChunk) const {
    std::vector<float> lse;
    const std::vector<float> ctx = forward(headChunk, &lse);
    Gradients g{std::vector<float>(queryFloats(), 99.0f), std::vector<float>(keyFloats(), 99.0f),
                std::vector<float>(keyFloats(), 99.0f)};
    if (headChunk == 0) {
      std::vector<float> scratch(scratchFloats());
      attentionBackward(dctx.data(), q.data(), k.data(), v.data(), mask.data(), ctx.data(),
                        lse.data(), g.dq.data(), g.dk.data(), g.dv.data(), scratch.data(), batch,
                        seq, hidden(), attentionHeads(), rate, kKey);
    } else {
      std::vector<float> workspace(
          cuda::attentionBackwardWorkspaceBytes(headChunk, batch, heads, seq, rate > 0,
                                                kvHeads < heads ? headDim : 0) /
          sizeof(float));
      chunkedAttentionBackward(dctx.data(), q.data(), k.data(), v.data(), mask.data(), ctx.data(),
                               lse.data(), workspace.data(), g.dq.data(), g.dk.data(), g.dv.data(),
                               headChunk, batch, seq, hidden(), attentionHeads(), rate, kKey);
    }
    return g;
  }

  /// Whether key j is visible to query i of sequence b.
  bool visible(int64_t b, int64_t i, int64_t j) const {
    const int32_t key = mask[b * seq + j], query = mask[b * seq + i];
    return causal ? j <= i && key != 0 && key == query : key != 0;
  }

  /// ctx and lse in double, the textbook way: per query row the keys it reaches (all, or
  /// with causal 0 to i), weight 0 where not visible, uniform over the reached keys where
  /// none is (lse then -inf); then the documented dropout.
  std::vector<double> reference(std::vector<double> *lse) const {
    const int64_t group = heads / kvHeads;
    std::vector<double> ctx(queryFloats(), 0.0), weights(seq);
    lse->assign(batch * heads * seq, 0.0);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t kvHead = h / group;
        for (int64_t i = 0; i < seq; ++i) {
          const int64_t reach = causal ? i + 1 : seq;
          bool anyKey = false;
          for (int64_t j = 0; j < reach; ++j)
            anyKey |= visible(b, i, j);
          double maxScore = -INFINITY, sum = 0.0, visibleSum = 0.0;
          for (int64_t j = 0; j < reach; ++j) {
            double dot = 0.0;
            for (int64_t c = 0; c < headDim; ++c)
              dot += double(q[(b * seq + i) * hidden() + h * headDim + c]) *
                     k[(b * seq + j) * kvHidden() + kvHead * headDim + c];
            const double score = dot / std::sqrt(double(headDim));
            weights[j] = !anyKey ? 0.0 : visible(b, i, j) ? score : -INFINITY;
            maxScore = std::max(maxScore, weights[j]);
          }
          for (int64_t j = 0; j < reach; ++j) {
            sum += weights[j] = std::exp(weights[j] - maxScore);
            visibleSum += visible(b, i, j) ? weights[j] : 0.0;
          }
          (*lse)[(b * heads + h) * seq + i] = anyKey ? maxScore + std::log(visibleSum) : -INFINITY;
          for (int64_t j = 0; j < reach; ++j) {
            const bool keep = dropoutKeep(kKey, b, attentionDropoutIndex(h, i, j), rate);
            const double probability = keep ? weights[j] / sum / (1.0 - rate) : 0.0;
            for (int64_t c = 0; c < headDim; ++c)
              ctx[(b * seq + i) * hidden() + h * headDim + c] +=
                  probability * v[(b * seq + j) * kvHidden() + kvHead * headDim + c];
          }
        }
      }
    return ctx;
  }

  /// dctx with the padded queries' rows (mask 0) zero, as a loss gives them.
  std::vector<float> paddedRowsZero(std::vector<float> dctx) const {
    for (int64_t row = 0; row < batch * seq; ++row)
      if (mask[row] == 0)
        std::fill_n(dctx.begin() + row * hidden(), hidden(), 0.0f);
    return dctx;
  }
};

/// Two sequences of 45 (two query blocks of the CPU kernels): the first packs documents of
/// 20, 3 and 15 tokens and pads 7; the second is one document of 40 and pads 5.
std::vector<int32_t> packedMask() {
  std::vector<int32_t> mask;
  for (auto [document, length] : {std::pair{1, 20}, {2, 3}, {3, 15}, {0, 7}, {1, 40}, {0, 5}})
    mask.insert(mask.end(), length, document);
  return mask;
}

/// 4 query heads of 4 dims over 2 key/value heads, causal, packed documents.
Problem decoderProblem(float rate) { return {2, 45, 4, 2, 4, true, rate, packedMask()}; }

void expectMatchesReference(const Problem &problem, int64_t headChunk) {
  std::vector<float> lse;
  const std::vector<float> ctx = problem.forward(headChunk, &lse);
  std::vector<double> expectedLse;
  const std::vector<double> expected = problem.reference(&expectedLse);
  for (size_t e = 0; e < ctx.size(); ++e)
    ASSERT_NEAR(ctx[e], expected[e], 1e-5) << "ctx[" << e << "], head chunk " << headChunk;
  for (size_t r = 0; r < lse.size(); ++r)
    if (std::isinf(expectedLse[r]))
      EXPECT_EQ(lse[r], -FLT_MAX) << "lse[" << r << "] of a query that sees no key";
    else
      EXPECT_NEAR(lse[r], expectedLse[r], 1e-5) << "lse[" << r << "], head chunk " << headChunk;
}
} // namespace

TEST(CausalAttention, ForwardMatchesNaiveReference) {
  for (float rate : {0.0f, 0.2f})
    for (int64_t headChunk : {0, 2, 4}) {
      SCOPED_TRACE(rate);
      expectMatchesReference(decoderProblem(rate), headChunk);
    }
}

// Every key/value head serving one query head, and one serving all of them (multi-query).
TEST(CausalAttention, ForwardMatchesReferenceForEveryGrouping) {
  for (int64_t kvHeads : {4, 1}) {
    SCOPED_TRACE(kvHeads);
    Problem problem{2, 45, 4, kvHeads, 4, true, 0.2f, packedMask()};
    expectMatchesReference(problem, 0);
    expectMatchesReference(problem, 4);
  }
}

// Grouped heads without the causal mask: the padding mask alone.
TEST(CausalAttention, GroupedPaddingOnlyMatchesReference) {
  Problem problem = decoderProblem(0.2f);
  problem.causal = false;
  expectMatchesReference(problem, 0);
  expectMatchesReference(problem, 2);
}

// L = sum dctx . ctx, with dctx zero on the padded queries (which see no key, so their
// ctx does not depend on q or k at all, and a loss never reads them).
TEST(CausalAttention, BackwardMatchesFiniteDifferences) {
  for (float rate : {0.0f, 0.2f})
    for (int64_t headChunk : {0, 2}) {
      SCOPED_TRACE(testing::Message() << "dropout " << rate << ", head chunk " << headChunk);
      Problem problem = decoderProblem(rate);
      const std::vector<float> dctx =
          problem.paddedRowsZero(randomTensor(problem.queryFloats(), 43));
      const Problem::Gradients g = problem.backward(dctx, headChunk);
      auto forward = [&] { return problem.forward(headChunk); };
      expectGradientNear(g.dq, numericGradient(problem.q, dctx, forward), "dq");
      expectGradientNear(g.dk, numericGradient(problem.k, dctx, forward), "dk");
      expectGradientNear(g.dv, numericGradient(problem.v, dctx, forward), "dv");
    }
}

// Padded queries (mask 0) see no key. Where their dctx is zero they add exactly nothing:
// their dq is 0, and dk and dv do not change when their q does; nothing is NaN or Inf.
TEST(CausalAttention, PaddedQueriesAddNothing) {
  for (int64_t headChunk : {0, 2}) {
    SCOPED_TRACE(headChunk);
    Problem problem = decoderProblem(0.2f);
    const std::vector<float> dctx = problem.paddedRowsZero(randomTensor(problem.queryFloats(), 44));
    const Problem::Gradients before = problem.backward(dctx, headChunk);
    for (int64_t row = 0; row < problem.batch * problem.seq; ++row)
      if (problem.mask[row] == 0)
        for (int64_t c = 0; c < problem.hidden(); ++c) {
          EXPECT_EQ(before.dq[row * problem.hidden() + c], 0.0f) << "row " << row;
          problem.q[row * problem.hidden() + c] = 1e3f;
        }
    const Problem::Gradients after = problem.backward(dctx, headChunk);
    EXPECT_EQ(after.dk, before.dk);
    EXPECT_EQ(after.dv, before.dv);
    for (const std::vector<float> *grads : {&after.dq, &after.dk, &after.dv})
      for (float value : *grads)
        ASSERT_TRUE(std::isfinite(value));
  }
}

// Each document of a packed row attends as it would alone at the start of a row of its
// own: same ctx for its tokens (no dropout, whose keys follow the position).
TEST(CausalAttention, PackedDocumentsAttendAsAlone) {
  const Problem packed = decoderProblem(0.0f);
  const std::vector<float> packedCtx = packed.forward(0);
  int64_t start = 0;
  for (int64_t length : {20, 3, 15}) {
    Problem alone{1, length, 4, 2, 4, true, 0.0f, std::vector<int32_t>(length, 1)};
    std::copy_n(packed.q.begin() + start * packed.hidden(), length * packed.hidden(),
                alone.q.begin());
    std::copy_n(packed.k.begin() + start * packed.kvHidden(), length * packed.kvHidden(),
                alone.k.begin());
    std::copy_n(packed.v.begin() + start * packed.kvHidden(), length * packed.kvHidden(),
                alone.v.begin());
    const std::vector<float> ctx = alone.forward(0);
    for (int64_t e = 0; e < length * packed.hidden(); ++e)
      ASSERT_NEAR(packedCtx[start * packed.hidden() + e], ctx[e], 1e-6)
          << "document at " << start << ", element " << e;
    start += length;
  }
}
