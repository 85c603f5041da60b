// The tensor-core attention (chunkedAttentionForward/Backward) against the fused kernels,
// which attention_test.cpp checks against the CPU: ctx, lse, dq, dk and dv for head chunks
// of 1, 3 (a partial last chunk) and all 4 heads, an odd sequence length, a fully visible,
// a partly masked and a fully masked sequence, with and without dropout; the results
// bit-identical for every head chunk; both paths' dropout masks, read off one-hot values,
// against the host's dropoutKeep. Every workspace is allocated at exactly its planned size
// (attentionForwardWorkspaceBytes, attentionBackwardWorkspaceBytes), so on the simulated
// device an access past it faults the test.
#include "cuda_test_support.h"

#include "bertc/runtime/cuda_chunked_attention.h"
#include "bertc/runtime/cuda_kernels.h"

namespace bertc::cuda::test {
namespace {

template <typename T> class ChunkedAttentionTest : public CudaTypedTest<T> {
protected:
  void SetUp() override {
    CudaTypedTest<T>::SetUp();
    if (!this->IsSkipped() && std::is_same_v<T, bf16> && deviceMajorVersion() < 8)
      GTEST_SKIP() << "bf16 GEMMs need sm_80 or newer";
  }
};
TYPED_TEST_SUITE(ChunkedAttentionTest, StorageTypes, StorageTypeNames);

/// One attention call's inputs: q, k, v and dctx [batch, seq, hidden], the key mask.
template <typename T> struct Problem {
  int64_t batch, seq, hidden, heads;
  std::vector<T> q, k, v, dctx;
  std::vector<int32_t> mask;

  int64_t size() const { return batch * seq * hidden; }
};

/// Random inputs (q and k in [-0.5, 0.5), so no probability underflows a 16-bit type).
template <typename T> Problem<T> randomProblem(int64_t seq, int64_t hidden, int64_t heads) {
  constexpr int64_t batch = 3;
  const int64_t n = batch * seq * hidden;
  return {batch,
          seq,
          hidden,
          heads,
          randomValues<T>(n, 1, -0.5f, 0.5f),
          randomValues<T>(n, 2, -0.5f, 0.5f),
          randomValues<T>(n, 3),
          randomValues<T>(n, 4),
          attentionKeyMask(batch, seq)};
}

template <typename T> struct Results {
  std::vector<T> ctx;
  std::vector<float> lse;
  std::vector<T> dq, dk, dv;
};

const DropoutKey kKey{42, 3, 5, 8};

/// The fused kernels: the forward, then the backward from its ctx and lse.
template <typename T> Results<T> runFused(const Problem<T> &x, float dropoutRate) {
  DeviceArray<T> q(x.q), k(x.k), v(x.v), dctx(x.dctx), ctx(x.size());
  DeviceArray<T> dq(x.size()), dk(x.size()), dv(x.size());
  DeviceArray<int32_t> mask(x.mask);
  DeviceArray<float> lse(x.batch * x.heads * x.seq);
  DeviceArray<float> backwardWorkspace(
      attentionBackwardWorkspaceBytes(0, x.batch, x.heads, x.seq, dropoutRate > 0) / sizeof(float));
  attentionForward(q.get(), k.get(), v.get(), mask.get(), ctx.get(), lse.get(), x.batch, x.seq,
                   x.hidden, x.heads, dropoutRate, kKey, nullptr);
  attentionBackward(dctx.get(), q.get(), k.get(), v.get(), mask.get(), ctx.get(), lse.get(),
                    backwardWorkspace.get(), dq.get(), dk.get(), dv.get(), x.batch, x.seq, x.hidden,
                    x.heads, dropoutRate, kKey, nullptr);
  return {ctx.download(), lse.download(), dq.download(), dk.download(), dv.download()};
}

/// The tensor-core kernels with `headChunk` heads a chunk: the forward, then the backward
/// from `saved`'s ctx and lse when given (so that two backwards read the same inputs),
/// else from this forward's.
template <typename T>
Results<T> runChunked(const Problem<T> &x, float dropoutRate, int64_t headChunk,
                      const Results<T> *saved = nullptr, GemmMath math = GemmMath::Fp32) {
  DeviceArray<T> q(x.q), k(x.k), v(x.v), dctx(x.dctx), ctx(x.size());
  DeviceArray<T> dq(x.size()), dk(x.size()), dv(x.size());
  DeviceArray<int32_t> mask(x.mask);
  DeviceArray<float> lse(x.batch * x.heads * x.seq);
  DeviceArray<float> forwardWorkspace(attentionForwardWorkspaceBytes(headChunk, x.batch, x.seq) /
                                      sizeof(float));
  DeviceArray<float> backwardWorkspace(
      attentionBackwardWorkspaceBytes(headChunk, x.batch, x.heads, x.seq, dropoutRate > 0) /
      sizeof(float));
  DeviceArray<std::byte> gemmWorkspace(kCudaWorkspaceBytes);
  LinearGemms gemms(gemmWorkspace.get(), nullptr);
  chunkedAttentionForward(gemms, q.get(), k.get(), v.get(), mask.get(), ctx.get(), lse.get(),
                          forwardWorkspace.get(), headChunk, x.batch, x.seq, x.hidden, x.heads,
                          dropoutRate, kKey, math);
  Results<T> results{ctx.download(), lse.download(), {}, {}, {}};
  DeviceArray<T> savedCtx(saved ? saved->ctx : results.ctx);
  DeviceArray<float> savedLse(saved ? saved->lse : results.lse);
  chunkedAttentionBackward(gemms, dctx.get(), q.get(), k.get(), v.get(), mask.get(), savedCtx.get(),
                           savedLse.get(), backwardWorkspace.get(), dq.get(), dk.get(), dv.get(),
                           headChunk, x.batch, x.seq, x.hidden, x.heads, dropoutRate, kKey, math);
  results.dq = dq.download();
  results.dk = dk.download();
  results.dv = dv.download();
  return results;
}

constexpr int64_t kHeads = 4;
const int64_t kHeadChunks[] = {1, 3, kHeads};

/// Each head chunk against the fused kernels. fp32: the same math in another order of
/// summation. 16-bit: the GEMMs read P*Z and dS rounded to T (relative error 2^-9 for bf16,
/// 2^-12 for fp16, per term of a sum of positive weights), one rounding step of T.
template <typename T> void checkAgainstFused(int64_t seq, int64_t hidden, float dropoutRate) {
  const Problem<T> x = randomProblem<T>(seq, hidden, kHeads);
  const Results<T> fused = runFused(x, dropoutRate);
  constexpr bool fp32 = std::is_same_v<T, float>;
  const double atol = fp32 ? 1e-5 : Tolerance<T>::atol, rtol = fp32 ? 1e-5 : Tolerance<T>::rtol;
  for (int64_t headChunk : kHeadChunks) {
    const std::string name = "seq " + std::to_string(seq) + ", hidden " + std::to_string(hidden) +
                             ", head chunk " + std::to_string(headChunk) + ", dropout " +
                             std::to_string(dropoutRate);
    const Results<T> chunked = runChunked(x, dropoutRate, headChunk, &fused);
    // fp32 on both from the same inputs; a fully masked row is -FLT_MAX on both, exactly.
    expectClose(chunked.lse, fused.lse, 1e-5, 1e-5, "lse, " + name);
    expectClose(chunked.ctx, fused.ctx, atol, rtol, "ctx, " + name);
    expectClose(chunked.dq, fused.dq, atol, rtol, "dq, " + name);
    expectClose(chunked.dk, fused.dk, atol, rtol, "dk, " + name);
    expectClose(chunked.dv, fused.dv, atol, rtol, "dv, " + name);
  }
}

TYPED_TEST(ChunkedAttentionTest, MatchesFusedWithoutDropout) {
  checkAgainstFused<TypeParam>(37, 96, 0.0f);  // head dim 24, two key tiles of a row
  checkAgainstFused<TypeParam>(70, 256, 0.0f); // head dim 64, three
  // The second sequence's mask row starts 16-byte aligned and its masked keys at 27, inside
  // a lane's group of four: the row kernel's vector read of the mask words sees both kinds.
  checkAgainstFused<TypeParam>(40, 96, 0.0f);
}

TYPED_TEST(ChunkedAttentionTest, MatchesFusedWithDropout) {
  checkAgainstFused<TypeParam>(37, 96, 0.1f);
  checkAgainstFused<TypeParam>(70, 256, 0.1f);
}

// A head's products and rows do not depend on which chunk holds it, or where in the chunk.
TYPED_TEST(ChunkedAttentionTest, SameBitsForEveryHeadChunk) {
  const Problem<TypeParam> x = randomProblem<TypeParam>(37, 96, kHeads);
  const Results<TypeParam> one = runChunked(x, 0.1f, 1);
  for (int64_t headChunk : {int64_t(3), kHeads}) {
    const std::string name = "head chunk " + std::to_string(headChunk) + " vs 1";
    const Results<TypeParam> other = runChunked(x, 0.1f, headChunk);
    expectBitIdentical(other.ctx, one.ctx, "ctx, " + name);
    expectBitIdentical(other.lse, one.lse, "lse, " + name);
    expectBitIdentical(other.dq, one.dq, "dq, " + name);
    expectBitIdentical(other.dk, one.dk, "dk, " + name);
    expectBitIdentical(other.dv, one.dv, "dv, " + name);
  }
}

/// Expects value (b, i, h * headDim + j) of a [batch, seq, hidden] result (with `byKey`,
/// value (b, j, h * headDim + i)) to be nonzero exactly where dropout keeps probability
/// (b, h, i, j) (host dropoutKeep) of a key the query sees (every key, in a fully masked
/// sequence).
template <typename T>
void expectKeptPattern(const std::vector<T> &values, const Problem<T> &x, float dropoutRate,
                       bool byKey, const std::string &what) {
  const int64_t headDim = x.hidden / x.heads;
  int misses = 0;
  for (int64_t b = 0; b < x.batch; ++b) {
    const bool allMasked =
        std::all_of(&x.mask[b * x.seq], &x.mask[(b + 1) * x.seq], [](int32_t m) { return m == 0; });
    for (int64_t h = 0; h < x.heads; ++h)
      for (int64_t i = 0; i < x.seq; ++i)
        for (int64_t j = 0; j < x.seq; ++j) {
          const bool kept = dropoutKeep(kKey, b, attentionDropoutIndex(h, i, j), dropoutRate);
          const bool visible = allMasked || x.mask[b * x.seq + j] != 0;
          const int64_t row = byKey ? j : i, column = byKey ? i : j;
          const bool nonzero =
              toFloat(values[(b * x.seq + row) * x.hidden + h * headDim + column]) != 0.0f;
          if (nonzero != (kept && visible) && ++misses <= 5)
            ADD_FAILURE() << what << ": (b " << b << ", h " << h << ", i " << i << ", j " << j
                          << ") is " << (nonzero ? "kept" : "dropped") << ", dropoutKeep says "
                          << (kept ? "kept" : "dropped");
        }
  }
  EXPECT_EQ(misses, 0) << what;
}

// With v's rows one-hot (v_j = e_j in every head), ctx_i holds P_ij Z_ij; with dctx's rows
// one-hot, dv_j holds P_ij Z_ij over i. So both show which probabilities dropout kept.
TYPED_TEST(ChunkedAttentionTest, DropoutMasksMatchTheFusedKernels) {
  constexpr int64_t seq = 37, headDim = 40; // a one-hot row per key needs headDim >= seq
  constexpr float rate = 0.5f;
  Problem<TypeParam> x = randomProblem<TypeParam>(seq, kHeads * headDim, kHeads);
  for (int64_t b = 0; b < x.batch; ++b)
    for (int64_t t = 0; t < seq; ++t)
      for (int64_t c = 0; c < x.hidden; ++c) {
        const TypeParam oneHot = fromFloat<TypeParam>(c % headDim == t ? 1.0f : 0.0f);
        x.v[(b * seq + t) * x.hidden + c] = oneHot;
        x.dctx[(b * seq + t) * x.hidden + c] = oneHot;
      }
  const Results<TypeParam> fused = runFused(x, rate);
  expectKeptPattern(fused.ctx, x, rate, false, "fused ctx");
  expectKeptPattern(fused.dv, x, rate, true, "fused dv");
  for (int64_t headChunk : kHeadChunks) {
    const Results<TypeParam> chunked = runChunked(x, rate, headChunk);
    const std::string name = ", head chunk " + std::to_string(headChunk);
    expectKeptPattern(chunked.ctx, x, rate, false, "chunked ctx" + name);
    expectKeptPattern(chunked.dv, x, rate, true, "chunked dv" + name);
  }
}

using ChunkedAttentionShapeTest = CudaTest;

// --tf32: every product rounds its fp32 operands to TF32 (10 mantissa bits, 2^-11 =
// 4.9e-4 relative). Every result moves, and stays within that rounding of fp32's, relative
// and absolute (here by at most 2e-4: 1e-4 fails for ctx and dv). At BERT's head dimension
// and a length of 128: at 37 keys and a head dimension of 24 an H200's cuBLASLt answered
// the TF32 request with its fp32 kernel, which TF32 allows but does not require.
TEST_F(ChunkedAttentionShapeTest, Tf32RoundsTheProductsOperands) {
  if (deviceMajorVersion() < 8)
    GTEST_SKIP() << "TF32 needs sm_80 or newer";
  const Problem<float> x = randomProblem<float>(128, 64 * kHeads, kHeads);
  const Results<float> fp32 = runChunked(x, 0.1f, 3);
  const Results<float> tf32 = runChunked<float>(x, 0.1f, 3, nullptr, GemmMath::Tf32);
  const std::pair<const char *, std::pair<const std::vector<float> *, const std::vector<float> *>>
      results[] = {{"ctx", {&tf32.ctx, &fp32.ctx}},
                   {"lse", {&tf32.lse, &fp32.lse}},
                   {"dq", {&tf32.dq, &fp32.dq}},
                   {"dk", {&tf32.dk, &fp32.dk}},
                   {"dv", {&tf32.dv, &fp32.dv}}};
  for (const auto &[name, pair] : results) {
    expectClose(*pair.first, *pair.second, 5e-4, 5e-4, std::string(name) + ", TF32 vs fp32");
    EXPECT_NE(*pair.first, *pair.second) << name << ": TF32 left every bit as fp32's";
  }
}

TEST_F(ChunkedAttentionShapeTest, RejectsHeadChunksOutsideTheHeads) {
  DeviceArray<std::byte> gemmWorkspace(kCudaWorkspaceBytes);
  LinearGemms gemms(gemmWorkspace.get(), nullptr);
  // The shape is checked before anything is queued.
  for (int64_t headChunk : {int64_t(0), int64_t(3)})
    EXPECT_THROW(chunkedAttentionForward<float>(gemms, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                nullptr, nullptr, headChunk, 1, 8, 64, 2, 0.0f,
                                                kKey),
                 std::invalid_argument);
}

} // namespace
} // namespace bertc::cuda::test
