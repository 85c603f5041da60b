// Tests of the CPU attention kernels' grouped-query heads (kv_heads < heads), causal: the
// fused and chunked kernels against each other in fp32, bf16 and fp16; the grouped call
// against the same keys and values repeated per query head (transformers' repeat_kv, which
// bertc never does in memory) with dk and dv summed over each group; a head count alone
// meaning kv_heads = heads without the causal mask; nothing written past the exactly sized
// scratch and workspaces, which grow by the group sums.
#include "bertc/abi/kernel_workspace.h"
#include "bertc/runtime/counter_rng.h"
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace bertc;
using namespace bertc::cpu;
using bertc::test::randomTensor;

namespace {
constexpr DropoutKey kKey{3, 1, 4, 0};
constexpr int64_t kBatch = 2, kSeq = 41, kHeadDim = 8;

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

/// Padding at the end of sequence 0 and two documents in sequence 1.
std::vector<int32_t> documentMask() {
  std::vector<int32_t> mask(kBatch * kSeq, 1);
  std::fill(mask.begin() + kSeq - 6, mask.begin() + kSeq, 0);
  std::fill(mask.begin() + kSeq + 17, mask.end(), 2);
  return mask;
}

template <typename T> struct Outputs {
  std::vector<T> ctx, dq, dk, dv;
  std::vector<float> lse;
};

/// One problem in storage type T: q [batch, seq, heads * d], k, v [batch, seq, kvHeads * d].
template <typename T> struct Problem {
  AttentionHeads heads;
  float rate;
  std::vector<T> q = narrow<T>(randomTensor(queryFloats(), 50)),
                 k = narrow<T>(randomTensor(keyFloats(), 51)),
                 v = narrow<T>(randomTensor(keyFloats(), 52)),
                 dctx = narrow<T>(randomTensor(queryFloats(), 53));
  std::vector<int32_t> mask = documentMask();

  int64_t hidden() const { return heads.heads * kHeadDim; }
  int64_t queryFloats() const { return kBatch * kSeq * heads.heads * kHeadDim; }
  int64_t keyFloats() const { return kBatch * kSeq * heads.kvHeads * kHeadDim; }
  int64_t groupedHeadDim() const { return heads.grouped() ? kHeadDim : 0; }
  int64_t scratchFloats() const { return attentionScratchFloats(kSeq, groupedHeadDim()); }
  int64_t forwardWorkspaceFloats(int64_t headChunk) const {
    return cuda::attentionForwardWorkspaceBytes(headChunk, kBatch, kSeq) / sizeof(float);
  }
  int64_t backwardWorkspaceFloats(int64_t headChunk) const {
    return cuda::attentionBackwardWorkspaceBytes(headChunk, kBatch, heads.heads, kSeq, rate > 0,
                                                 groupedHeadDim()) /
           sizeof(float);
  }

  /// The forward and the backward from its ctx and lse, fused (headChunk 0) or chunked,
  /// in `space` (scratch or workspace, at least as large as asked).
  Outputs<T> run(int64_t headChunk, std::vector<float> &space) const {
    Outputs<T> out{std::vector<T>(queryFloats()), std::vector<T>(queryFloats()),
                   std::vector<T>(keyFloats()), std::vector<T>(keyFloats()),
                   std::vector<float>(kBatch * heads.heads * kSeq)};
    if (headChunk == 0) {
      attentionForward(q.data(), k.data(), v.data(), mask.data(), out.ctx.data(), out.lse.data(),
                       space.data(), kBatch, kSeq, hidden(), heads, rate, kKey);
      attentionBackward(dctx.data(), q.data(), k.data(), v.data(), mask.data(), out.ctx.data(),
                        out.lse.data(), out.dq.data(), out.dk.data(), out.dv.data(), space.data(),
                        kBatch, kSeq, hidden(), heads, rate, kKey);
    } else {
      chunkedAttentionForward(q.data(), k.data(), v.data(), mask.data(), out.ctx.data(),
                              out.lse.data(), space.data(), headChunk, kBatch, kSeq, hidden(),
                              heads, rate, kKey);
      chunkedAttentionBackward(dctx.data(), q.data(), k.data(), v.data(), mask.data(),
                               out.ctx.data(), out.lse.data(), space.data(), out.dq.data(),
                               out.dk.data(), out.dv.data(), headChunk, kBatch, kSeq, hidden(),
                               heads, rate, kKey);
    }
    return out;
  }
  Outputs<T> run(int64_t headChunk) const {
    std::vector<float> space(headChunk == 0 ? scratchFloats()
                                            : std::max(forwardWorkspaceFloats(headChunk),
                                                       backwardWorkspaceFloats(headChunk)));
    return run(headChunk, space);
  }
};

/// |actual - expected| <= atol + rtol |expected| element by element.
template <typename T>
void expectClose(const std::vector<T> &actual, const std::vector<T> &expected, double atol,
                 double rtol, const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t e = 0; e < actual.size(); ++e) {
    const double want = toFloat(expected[e]);
    ASSERT_NEAR(toFloat(actual[e]), want, atol + rtol * std::abs(want)) << what << "[" << e << "]";
  }
}

template <typename T> class GroupedAttention : public ::testing::Test {};
using StorageTypes = ::testing::Types<float, bf16, fp16>;
TYPED_TEST_SUITE(GroupedAttention, StorageTypes);

/// The fused kernel's tolerance against the chunked one: fp32 rounding, or in 16 bits the
/// chunked kernel's P*Z and dS rounded to T (2^-9 for bf16, 2^-12 for fp16 relative, per
/// term of sums of up to 41 terms) and both outputs' rounding.
template <typename T> constexpr double kTolerance = 1e-5;
template <> constexpr double kTolerance<bf16> = 8e-3;
template <> constexpr double kTolerance<fp16> = 2e-3;
} // namespace

// 6 query heads over 2 key/value heads (groups of 3), with dropout; head chunks of one
// group, two (a partial last chunk) and all.
TYPED_TEST(GroupedAttention, FusedAndChunkedAgree) {
  const Problem<TypeParam> problem{{6, 2, true}, 0.1f};
  const Outputs<TypeParam> fused = problem.run(0);
  for (int64_t headChunk : {3, 6}) {
    SCOPED_TRACE(headChunk);
    const Outputs<TypeParam> chunked = problem.run(headChunk);
    const double tolerance = kTolerance<TypeParam>;
    expectClose(chunked.lse, fused.lse, 1e-5, 1e-5, "lse");
    expectClose(chunked.ctx, fused.ctx, tolerance, tolerance, "ctx");
    expectClose(chunked.dq, fused.dq, tolerance, tolerance, "dq");
    expectClose(chunked.dk, fused.dk, tolerance, tolerance, "dk");
    expectClose(chunked.dv, fused.dv, tolerance, tolerance, "dv");
  }
}

// transformers' repeat_kv: key/value head g serves query heads 3g .. 3g + 2. The grouped
// call gives the ctx of the keys and values copied out per query head, and dk, dv the sums
// of the copies' gradients over each group.
TEST(GroupedAttention, MatchesRepeatedKeysAndValues) {
  constexpr int64_t group = 3;
  for (int64_t headChunk : {0, 6}) {
    SCOPED_TRACE(headChunk);
    const Problem<float> grouped{{6, 2, true}, 0.1f};
    Problem<float> repeated{{6, 6, true}, 0.1f};
    repeated.q = grouped.q;
    repeated.dctx = grouped.dctx;
    for (int64_t token = 0; token < kBatch * kSeq; ++token)
      for (int64_t h = 0; h < 6; ++h)
        for (int64_t c = 0; c < kHeadDim; ++c) {
          const int64_t from = (token * 2 + h / group) * kHeadDim + c;
          repeated.k[(token * 6 + h) * kHeadDim + c] = grouped.k[from];
          repeated.v[(token * 6 + h) * kHeadDim + c] = grouped.v[from];
        }
    const Outputs<float> g = grouped.run(headChunk), r = repeated.run(headChunk);
    expectClose(g.ctx, r.ctx, 1e-6, 1e-6, "ctx");
    expectClose(g.lse, r.lse, 1e-6, 1e-6, "lse");
    expectClose(g.dq, r.dq, 1e-6, 1e-6, "dq");
    std::vector<float> dkSum(grouped.keyFloats(), 0.0f), dvSum(grouped.keyFloats(), 0.0f);
    for (int64_t token = 0; token < kBatch * kSeq; ++token)
      for (int64_t h = 0; h < 6; ++h)
        for (int64_t c = 0; c < kHeadDim; ++c) {
          const int64_t to = (token * 2 + h / group) * kHeadDim + c;
          dkSum[to] += r.dk[(token * 6 + h) * kHeadDim + c];
          dvSum[to] += r.dv[(token * 6 + h) * kHeadDim + c];
        }
    expectClose(g.dk, dkSum, 1e-6, 1e-5, "dk");
    expectClose(g.dv, dvSum, 1e-6, 1e-5, "dv");
  }
}

// A BERT trainer passes the head count alone: kv_heads = heads, no causal mask, the very
// call of an explicit AttentionHeads{heads, heads, false}, and a different one from causal.
TEST(GroupedAttention, HeadCountAloneIsTodaysAttention) {
  const Problem<float> explicitHeads{{4, 4, false}, 0.1f};
  Problem<float> plain{4, 0.1f};
  EXPECT_EQ(plain.heads.kvHeads, 4);
  EXPECT_FALSE(plain.heads.causal);
  for (int64_t headChunk : {0, 2}) {
    const Outputs<float> a = plain.run(headChunk), b = explicitHeads.run(headChunk);
    EXPECT_EQ(a.ctx, b.ctx);
    EXPECT_EQ(a.dk, b.dk);
    plain.heads.causal = true;
    EXPECT_NE(plain.run(headChunk).ctx, a.ctx);
    plain.heads.causal = false;
  }
}

// Guard values after exactly sized scratch and workspaces come back untouched.
TEST(GroupedAttention, WritesNothingPastItsScratchOrWorkspace) {
  const Problem<bf16> problem{{6, 2, true}, 0.1f};
  const float guard = -12345.0f;
  for (int64_t headChunk : {0, 3, 6}) {
    const int64_t floats = headChunk == 0 ? problem.scratchFloats()
                                          : std::max(problem.forwardWorkspaceFloats(headChunk),
                                                     problem.backwardWorkspaceFloats(headChunk));
    std::vector<float> space(floats + 64, guard);
    problem.run(headChunk, space);
    for (int64_t i = floats; i < int64_t(space.size()); ++i)
      ASSERT_EQ(space[i], guard) << "head chunk " << headChunk << ", [" << i << "]";
  }
}
