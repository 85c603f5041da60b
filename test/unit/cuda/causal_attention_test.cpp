// The CUDA attention of decoders (grouped-query heads, the causal document mask) against the
// CPU kernels, which test/unit/kernels/causal_attention_test.cpp checks against a naive
// reference: every path, the backward from its own forward. The fused kernels against the
// CPU's fused one: fp32 on CUDA cores, and 16-bit on tensor cores at head dimensions 64, 80
// (run as 96), 96 and 128 (the simulated device is an sm_80); the chunked ones (GEMMs and row
// kernels) against the CPU's chunked twin, for head chunks of one group and of all heads. The
// inputs pack documents and padding into two sequences of 70 tokens (two tensor-core blocks,
// three CUDA-core ones), with and without dropout. On the simulated device, a causal
// tensor-core kernel loads about half the matrices of the full one: it skips the key tiles
// above the diagonal.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_chunked_attention.h"
#include "bertc/runtime/cuda_kernels.h"

#if defined(BERTC_CUDA_SIM)
#include "bertc/cuda_sim/matrix_load_counts.h"
#endif

namespace bertc::cuda::test {
namespace {

const DropoutKey kKey{42, 3, 5, 8};
constexpr int64_t kBatch = 2;

/// Sequence 0 packs documents of 30, 23 and 12 tokens and pads the rest; sequence 1 is one
/// document padded after 50 tokens.
std::vector<int32_t> documentMask(int64_t seq) {
  std::vector<int32_t> mask(kBatch * seq, 0);
  for (int64_t j = 0; j < seq; ++j) {
    mask[j] = j < 30 ? 1 : j < 53 ? 2 : j < 65 ? 3 : 0;
    mask[seq + j] = j < 50 ? 1 : 0;
  }
  return mask;
}

/// One call's inputs: q, dctx [batch, seq, heads * d], k, v [batch, seq, kvHeads * d].
template <typename T> struct Problem {
  int64_t seq, headDim;
  AttentionHeads heads;
  float rate;

  int64_t hidden() const { return heads.heads * headDim; }
  int64_t queryValues() const { return kBatch * seq * hidden(); }
  int64_t keyValues() const { return kBatch * seq * heads.kvHeads * headDim; }
  int64_t rows() const { return kBatch * heads.heads * seq; }
  int64_t groupedHeadDim() const { return heads.grouped() ? headDim : 0; }
  std::string name() const {
    return "seq " + std::to_string(seq) + ", head dim " + std::to_string(headDim) + ", heads " +
           std::to_string(heads.heads) + " over " + std::to_string(heads.kvHeads) + ", dropout " +
           std::to_string(rate);
  }

  // q and k in [-0.5, 0.5), so no probability underflows a 16-bit type.
  std::vector<T> q = randomValues<T>(queryValues(), 1, -0.5f, 0.5f);
  std::vector<T> k = randomValues<T>(keyValues(), 2, -0.5f, 0.5f);
  std::vector<T> v = randomValues<T>(keyValues(), 3), dctx = randomValues<T>(queryValues(), 4);
  std::vector<int32_t> mask = documentMask(seq);
};

template <typename T> struct Results {
  std::vector<T> ctx;
  std::vector<float> lse;
  std::vector<T> dq, dk, dv;
};

/// The CPU kernels: fused (headChunk 0) or the chunked twin.
template <typename T> Results<T> runCpu(const Problem<T> &x, int64_t headChunk) {
  Results<T> r{std::vector<T>(x.queryValues()), std::vector<float>(x.rows()),
               std::vector<T>(x.queryValues()), std::vector<T>(x.keyValues()),
               std::vector<T>(x.keyValues())};
  if (headChunk == 0) {
    std::vector<float> scratch(cpu::attentionScratchFloats(x.seq, x.groupedHeadDim()));
    cpu::attentionForward(x.q.data(), x.k.data(), x.v.data(), x.mask.data(), r.ctx.data(),
                          r.lse.data(), scratch.data(), kBatch, x.seq, x.hidden(), x.heads, x.rate,
                          kKey);
    cpu::attentionBackward(x.dctx.data(), x.q.data(), x.k.data(), x.v.data(), x.mask.data(),
                           r.ctx.data(), r.lse.data(), r.dq.data(), r.dk.data(), r.dv.data(),
                           scratch.data(), kBatch, x.seq, x.hidden(), x.heads, x.rate, kKey);
  } else {
    std::vector<float> workspace(attentionBackwardWorkspaceBytes(headChunk, kBatch, x.heads.heads,
                                                                 x.seq, x.rate > 0,
                                                                 x.groupedHeadDim()) /
                                 sizeof(float));
    cpu::chunkedAttentionForward(x.q.data(), x.k.data(), x.v.data(), x.mask.data(), r.ctx.data(),
                                 r.lse.data(), workspace.data(), headChunk, kBatch, x.seq,
                                 x.hidden(), x.heads, x.rate, kKey);
    cpu::chunkedAttentionBackward(x.dctx.data(), x.q.data(), x.k.data(), x.v.data(), x.mask.data(),
                                  r.ctx.data(), r.lse.data(), workspace.data(), r.dq.data(),
                                  r.dk.data(), r.dv.data(), headChunk, kBatch, x.seq, x.hidden(),
                                  x.heads, x.rate, kKey);
  }
  return r;
}

/// The CUDA kernels: fused (headChunk 0) or chunked, each workspace exactly its planned size.
template <typename T> Results<T> runCuda(const Problem<T> &x, int64_t headChunk) {
  DeviceArray<T> q(x.q), k(x.k), v(x.v), dctx(x.dctx), ctx(x.queryValues());
  DeviceArray<T> dq(x.queryValues()), dk(x.keyValues()), dv(x.keyValues());
  DeviceArray<int32_t> mask(x.mask);
  DeviceArray<float> lse(x.rows());
  DeviceArray<float> workspace(attentionBackwardWorkspaceBytes(headChunk, kBatch, x.heads.heads,
                                                               x.seq, x.rate > 0,
                                                               x.groupedHeadDim()) /
                               sizeof(float));
  if (headChunk == 0) {
    attentionForward(q.get(), k.get(), v.get(), mask.get(), ctx.get(), lse.get(), kBatch, x.seq,
                     x.hidden(), x.heads, x.rate, kKey, nullptr);
    attentionBackward(dctx.get(), q.get(), k.get(), v.get(), mask.get(), ctx.get(), lse.get(),
                      workspace.get(), dq.get(), dk.get(), dv.get(), kBatch, x.seq, x.hidden(),
                      x.heads, x.rate, kKey, nullptr);
  } else {
    DeviceArray<float> forwardWorkspace(attentionForwardWorkspaceBytes(headChunk, kBatch, x.seq) /
                                        sizeof(float));
    DeviceArray<std::byte> gemmWorkspace(kCudaWorkspaceBytes);
    LinearGemms gemms(gemmWorkspace.get(), nullptr);
    chunkedAttentionForward(gemms, q.get(), k.get(), v.get(), mask.get(), ctx.get(), lse.get(),
                            forwardWorkspace.get(), headChunk, kBatch, x.seq, x.hidden(), x.heads,
                            x.rate, kKey);
    chunkedAttentionBackward(gemms, dctx.get(), q.get(), k.get(), v.get(), mask.get(), ctx.get(),
                             lse.get(), workspace.get(), dq.get(), dk.get(), dv.get(), headChunk,
                             kBatch, x.seq, x.hidden(), x.heads, x.rate, kKey);
  }
  return {ctx.download(), lse.download(), dq.download(), dk.download(), dv.download()};
}

/// The CUDA path of `headChunk` against the CPU's, within `scale` of the storage type's
/// tolerance (fp32: a few ulps; 16-bit: one rounding step).
template <typename T> void expectMatchesCpu(const Problem<T> &x, int64_t headChunk, double scale) {
  const Results<T> cuda = runCuda(x, headChunk), cpu = runCpu(x, headChunk);
  const std::string name = x.name() + ", head chunk " + std::to_string(headChunk);
  const double atol = scale * Tolerance<T>::atol, rtol = scale * Tolerance<T>::rtol;
  // fp32 from the same stored inputs; a query that sees no key is -FLT_MAX on both.
  expectClose(cuda.lse, cpu.lse, 1e-5, 1e-5, "lse, " + name);
  expectClose(cuda.ctx, cpu.ctx, atol, rtol, "ctx, " + name);
  expectClose(cuda.dq, cpu.dq, atol, rtol, "dq, " + name);
  expectClose(cuda.dk, cpu.dk, atol, rtol, "dk, " + name);
  expectClose(cuda.dv, cpu.dv, atol, rtol, "dv, " + name);
}

template <typename T> class CausalAttentionTest : public CudaTypedTest<T> {};
TYPED_TEST_SUITE(CausalAttentionTest, StorageTypes, StorageTypeNames);

// 4 query heads over 2 key/value heads. fp32: online softmax and tile-order sums against the
// CPU's two passes (5e-5, as attention_test.cpp). 16-bit: the tensor cores' products take
// 16-bit probabilities and score gradients, and dk, dv add a group's two heads (3 steps).
TYPED_TEST(CausalAttentionTest, FusedMatchesCpu) {
  constexpr bool fp32 = std::is_same_v<TypeParam, float>;
  for (int64_t headDim : {64, 80, 96, 128})
    for (float rate : {0.0f, 0.1f})
      expectMatchesCpu(Problem<TypeParam>{70, headDim, {4, 2, true}, rate}, 0, fp32 ? 5.0 : 3.0);
}

// One key/value head for 3 query heads (multi-query), and grouped heads without the causal
// mask.
TYPED_TEST(CausalAttentionTest, FusedMatchesCpuForOtherGroupings) {
  constexpr double scale = std::is_same_v<TypeParam, float> ? 5.0 : 3.0;
  expectMatchesCpu(Problem<TypeParam>{70, 64, {3, 1, true}, 0.1f}, 0, scale);
  expectMatchesCpu(Problem<TypeParam>{70, 96, {4, 2, false}, 0.1f}, 0, scale);
}

// The GEMMs read each key/value head in place for its group (pointer arrays), dk and dv sum
// the group's per-head fp32 gradients; the CPU twin runs the same steps.
TYPED_TEST(CausalAttentionTest, ChunkedMatchesCpuTwin) {
  if (std::is_same_v<TypeParam, bf16> && deviceMajorVersion() < 8)
    GTEST_SKIP() << "bf16 GEMMs need sm_80 or newer";
  for (int64_t headDim : {64, 96})
    for (int64_t headChunk : {2, 4})
      expectMatchesCpu(Problem<TypeParam>{70, headDim, {4, 2, true}, 0.1f}, headChunk, 1.0);
}

class CausalAttentionKernelChoice : public CudaTest {};

TEST_F(CausalAttentionKernelChoice, TensorCoresForSixteenBitsUpToHeadDimension128) {
  const bool ampere = deviceMajorVersion() >= 8;
  for (int64_t headDim : {80, 96, 128})
    EXPECT_EQ(attentionOnTensorCores<bf16>(headDim), ampere) << headDim;
  EXPECT_FALSE(attentionOnTensorCores<fp16>(kMaxTensorCoreAttentionHeadDim + 1));
  EXPECT_FALSE(attentionOnTensorCores<float>(80));
}

TEST(CausalAttentionShapeTest, RejectsKeyValueHeadsThatDoNotDivideTheHeads) {
  // Shape checks come before any CUDA call, so this runs without a device.
  EXPECT_THROW(attentionForward<float>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 1, 8,
                                       96, AttentionHeads{6, 4, true}, 0.0f, kKey, nullptr),
               std::invalid_argument);
}

#if defined(BERTC_CUDA_SIM)
// Four tensor-core blocks of 64 queries: the causal forward and backward load the k and v
// tiles (and the key kernel the q and dctx tiles) on and below the diagonal only, 10 of 16
// block pairs, so well under the 0.7 of the full attention's matrices that the blocks' own
// rows and the diagonal add up to.
TEST(CausalAttentionTileLoads, TensorCoreKernelsSkipTheBlocksAboveTheDiagonal) {
  size_t matrices[2] = {};
  for (bool causal : {false, true}) {
    Problem<bf16> x{256, 64, {2, 2, causal}, 0.0f};
    x.mask.assign(x.mask.size(), 1);
    sim::resetMatrixLoadCounts();
    runCuda(x, 0);
    matrices[causal] = sim::matrixLoadCounts().matrices;
    EXPECT_EQ(sim::matrixLoadCounts().bankConflicts, 0u);
  }
  EXPECT_GT(matrices[0], 0u);
  EXPECT_LT(double(matrices[1]), 0.7 * double(matrices[0]))
      << matrices[1] << " matrices causal, " << matrices[0] << " full";
}
#endif

} // namespace
} // namespace bertc::cuda::test
