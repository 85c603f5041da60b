// The fused CUDA attention against the CPU's two-matrix attention: ctx and the saved
// log-sum-exp, and dq, dk, dv from the backward that reads them (each target's backward
// from its own forward), for head dimensions below, at and between the instantiated
// sizes (24, 32, 64, 128), sequence lengths that leave partial tiles, a fully visible, a
// partly masked and a fully masked sequence, with and without dropout (whose masks must
// match the CPU's for the results to agree at all). 16-bit storage up to head dimension 128
// runs the tensor-core kernels (the simulated device is an sm_80); on the simulated device,
// both also run on an sm_75: fp16 the same tensor-core kernels, bf16, which has no mma.sync
// there, the CUDA-core kernels, whose results differ from the tensor cores' in their
// roundings. The tensor-core kernels' loads from shared memory have no bank conflicts.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

#if defined(BERTC_CUDA_SIM)
#include "bertc/cuda_sim/matrix_load_counts.h"
#endif

namespace bertc::cuda::test {
namespace {

template <typename T> class AttentionTest : public CudaTypedTest<T> {};
TYPED_TEST_SUITE(AttentionTest, StorageTypes, StorageTypeNames);

struct AttentionCase {
  int64_t seq, hidden, heads;
};

/// What the CUDA attention computed.
template <typename T> struct AttentionResults {
  std::vector<T> ctx, dq, dk, dv;
};

template <typename T>
AttentionResults<T> checkAttention(const AttentionCase &c, float dropoutRate) {
  constexpr int64_t batch = 3;
  const int64_t n = batch * c.seq * c.hidden;
  const std::string name = "seq " + std::to_string(c.seq) + ", hidden " + std::to_string(c.hidden) +
                           ", heads " + std::to_string(c.heads) + ", dropout " +
                           std::to_string(dropoutRate);
  const DropoutKey key{42, 3, 5, 8};
  const auto q = randomValues<T>(n, 1), k = randomValues<T>(n, 2), v = randomValues<T>(n, 3);
  const auto dctx = randomValues<T>(n, 4);
  const auto mask = attentionKeyMask(batch, c.seq);

  std::vector<float> scratch(cpu::attentionScratchFloats(c.seq));
  std::vector<float> lse(batch * c.heads * c.seq);
  std::vector<T> ctx(n), dq(n), dk(n), dv(n);
  cpu::attentionForward(q.data(), k.data(), v.data(), mask.data(), ctx.data(), lse.data(),
                        scratch.data(), batch, c.seq, c.hidden, c.heads, dropoutRate, key);
  cpu::attentionBackward(dctx.data(), q.data(), k.data(), v.data(), mask.data(), ctx.data(),
                         lse.data(), dq.data(), dk.data(), dv.data(), scratch.data(), batch, c.seq,
                         c.hidden, c.heads, dropoutRate, key);

  DeviceArray<T> dQ(q), dK(k), dV(v), dDctx(dctx), dCtx(n), dDq(n), dDk(n), dDv(n);
  DeviceArray<int32_t> dMask(mask);
  DeviceArray<float> dLse(lse.size());
  DeviceArray<float> workspace(
      attentionBackwardWorkspaceBytes(0, batch, c.heads, c.seq, dropoutRate > 0) / sizeof(float));
  cuda::attentionForward(dQ.get(), dK.get(), dV.get(), dMask.get(), dCtx.get(), dLse.get(), batch,
                         c.seq, c.hidden, c.heads, dropoutRate, key, nullptr);
  cuda::attentionBackward(dDctx.get(), dQ.get(), dK.get(), dV.get(), dMask.get(), dCtx.get(),
                          dLse.get(), workspace.get(), dDq.get(), dDk.get(), dDv.get(), batch,
                          c.seq, c.hidden, c.heads, dropoutRate, key, nullptr);

  // The lse is fp32 from the same (stored) inputs on both: online against two passes. A
  // fully masked sequence's rows are -FLT_MAX on both, exactly.
  expectClose(dLse.download(), lse, 1e-5, 1e-5, "lse, " + name);
  // fp32: online softmax and tile-order sums against the CPU's two passes. 16-bit: the
  // output rounding, and for the backward the row term dctx·ctx taken from the rounded ctx.
  const double atol = std::is_same_v<T, float> ? 5e-5 : 2 * Tolerance<T>::atol;
  const double rtol = std::is_same_v<T, float> ? 1e-4 : 2 * Tolerance<T>::rtol;
  AttentionResults<T> results{dCtx.download(), dDq.download(), dDk.download(), dDv.download()};
  expectClose(results.ctx, ctx, atol, rtol, "ctx, " + name);
  expectClose(results.dq, dq, atol, rtol, "dq, " + name);
  expectClose(results.dk, dk, atol, rtol, "dk, " + name);
  expectClose(results.dv, dv, atol, rtol, "dv, " + name);
  return results;
}

const AttentionCase kCases[] = {
    {37, 48, 2},  // head dim 24: padded up to 32
    {37, 40, 2},  // 20: padded up to 32, the second head's rows not 16-byte aligned
    {33, 42, 2},  // 21: an odd head dimension, rows and pairs not 4-byte aligned
    {37, 64, 2},  // 32: one lane per row
    {45, 192, 3}, // 64: two lanes per row (BERT's head size)
    {33, 256, 2}, // 128: four lanes per row
    {130, 64, 1}, // 64, five key tiles
    {150, 64, 2}, // 32: two 128-key blocks (the second's mask words start at key 128)
};

TYPED_TEST(AttentionTest, MatchesCpuWithoutDropout) {
  for (const AttentionCase &c : kCases)
    checkAttention<TypeParam>(c, 0.0f);
}

TYPED_TEST(AttentionTest, MatchesCpuWithDropout) {
  for (const AttentionCase &c : kCases)
    checkAttention<TypeParam>(c, 0.1f);
}

class AttentionKernelChoice : public CudaTest {};

TEST_F(AttentionKernelChoice, TensorCoresForSixteenBitsUpToTheirLargestHeadDimension) {
  const int major = deviceMajorVersion();
  EXPECT_FALSE(attentionOnTensorCores<float>(64));
  EXPECT_EQ(attentionOnTensorCores<bf16>(64), major >= 8);
  EXPECT_EQ(attentionOnTensorCores<fp16>(24), major >= 7);
  EXPECT_EQ(attentionOnTensorCores<fp16>(128), major >= 7);
  EXPECT_FALSE(attentionOnTensorCores<bf16>(kMaxTensorCoreAttentionHeadDim + 1));
}

#if defined(BERTC_CUDA_SIM)
template <typename T> bool sameBits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

TEST_F(AttentionKernelChoice, Bf16OnAnSm75RunsTheCudaCoreKernels) {
  const AttentionCase bertHeads{45, 192, 3};
  const AttentionResults<bf16> tensorCores = checkAttention<bf16>(bertHeads, 0.1f);
  ScopedArch turing("sm_75");
  EXPECT_FALSE(attentionOnTensorCores<bf16>(64));
  EXPECT_TRUE(attentionOnTensorCores<fp16>(64));
  const AttentionResults<bf16> cudaCores = checkAttention<bf16>(bertHeads, 0.1f);
  // The tensor cores' products take 16-bit probabilities and score gradients.
  EXPECT_FALSE(sameBits(cudaCores.ctx, tensorCores.ctx));
  EXPECT_FALSE(sameBits(cudaCores.dq, tensorCores.dq));
}

// A build without the GPU's architecture runs an older one's PTX: the kernels are what that
// architecture compiled, so bf16's tensor-core ones are empty before sm_80, and the choice
// follows the image, not the GPU.
TEST_F(AttentionKernelChoice, KernelsFromAnOlderArchitecturesPtxChooseByTheirImage) {
  ScopedVariable turingImage("BERTC_SIM_PTX_ARCH", "sm_75");
  EXPECT_FALSE(attentionOnTensorCores<bf16>(64));
  EXPECT_TRUE(attentionOnTensorCores<fp16>(64));
  ScopedVariable ampereImage("BERTC_SIM_PTX_ARCH", "sm_80");
  EXPECT_TRUE(attentionOnTensorCores<bf16>(64));
}

TEST_F(AttentionKernelChoice, Fp16OnAnSm75RunsTheSameTensorCoreKernels) {
  const AttentionCase bertHeads{45, 192, 3};
  const AttentionResults<fp16> ampere = checkAttention<fp16>(bertHeads, 0.1f);
  ScopedArch turing("sm_75");
  EXPECT_TRUE(attentionOnTensorCores<fp16>(64));
  const AttentionResults<fp16> onTuring = checkAttention<fp16>(bertHeads, 0.1f);
  EXPECT_TRUE(sameBits(onTuring.ctx, ampere.ctx));
  EXPECT_TRUE(sameBits(onTuring.dq, ampere.dq));
  EXPECT_TRUE(sameBits(onTuring.dk, ampere.dk));
  EXPECT_TRUE(sameBits(onTuring.dv, ampere.dv));
}

// The tensor-core kernels' shared tiles have rows D + 8 values apart (attention_mma.cuh), so
// the 8 rows of each matrix ldmatrix loads fall in distinct groups of banks: one pass each,
// for each D (head dimensions 24 to 128, 80 taking D = 96).
TEST(AttentionTileLoads, TensorCoreKernelsLoadWithoutBankConflicts) {
  for (const AttentionCase &c :
       {AttentionCase{45, 192, 3}, AttentionCase{37, 64, 2}, AttentionCase{37, 40, 2},
        AttentionCase{37, 160, 2}, AttentionCase{33, 192, 2}, AttentionCase{33, 256, 2}}) {
    sim::resetMatrixLoadCounts();
    checkAttention<bf16>(c, 0.1f);
    const sim::MatrixLoadCounts counts = sim::matrixLoadCounts();
    const std::string shape = "head dim " + std::to_string(c.hidden / c.heads);
    EXPECT_GT(counts.matrices, 0u) << shape;
    EXPECT_EQ(counts.bankConflicts, 0u) << shape << ", of " << counts.matrices << " matrices";
  }
}
#endif

TEST(AttentionShapeTest, RejectsHeadDimensionsAboveTheLimit) {
  const DropoutKey key{1, 1, 1, 0};
  // Shape checks come before any CUDA call, so this runs without a device.
  EXPECT_THROW(cuda::attentionForward<float>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                             1, 8, 2 * (kMaxAttentionHeadDim + 1), 2, 0.0f, key,
                                             nullptr),
               std::invalid_argument);
  EXPECT_THROW(cuda::attentionForward<float>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                             1, 8, 100, 3, 0.0f, key, nullptr),
               std::invalid_argument);
}

} // namespace
} // namespace bertc::cuda::test
