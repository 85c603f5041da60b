// CUDA AdamW against the CPU twin, bit for bit: several parameters (with and without weight
// decay, one spanning several chunks) at offsets where the parameter and state regions do
// not line up, over three steps; the 16-bit working copies the same launch rewrites, as
// the CPU converts them one parameter at a time after its update; and the update of one
// parameter (in the backward), with its working copy rewritten in the same launch.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

namespace bertc::cuda::test {
namespace {

class AdamWTest : public CudaTest {};

TEST(AdamWChunksTest, SplitsParametersInOrder) {
  const std::vector<AdamWParameter> parameters = {{100, 0, 2 * kAdamWChunkElements + 5, true},
                                                  {0, 2 * kAdamWChunkElements + 5, 7, false}};
  const std::vector<AdamWChunk> chunks = adamwChunks(parameters, {1000, -1});
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(chunks[1].paramOffset, 100 + kAdamWChunkElements);
  EXPECT_EQ(chunks[1].stateOffset, kAdamWChunkElements);
  EXPECT_EQ(chunks[1].workingOffset, 1000 + kAdamWChunkElements);
  EXPECT_EQ(chunks[2].count, 5);
  EXPECT_EQ(chunks[3].count, 7);
  EXPECT_EQ(chunks[3].decay, 0);
  EXPECT_EQ(chunks[3].workingOffset, -1);
}

// What the plan counts is what the split makes: 2 * kAdamWChunkElements + 5 values are 3
// chunks, 7 are 1.
TEST(AdamWChunksTest, ChunkCountMatchesTheSplit) {
  EXPECT_EQ(adamwChunkCount(2 * kAdamWChunkElements + 5), 3);
  EXPECT_EQ(adamwChunkCount(7), 1);
  EXPECT_EQ(adamwChunkCount(kAdamWChunkElements), 1);
}

// 4 chunks of 32 bytes, then 1024 doubles (8192 bytes) at 128, the squared norm at 8320,
// the overflow flag at 8324: 8328 bytes.
TEST(AdamWChunksTest, OptimizerTablesLayout) {
  const OptimizerTables tables = optimizerTables(4);
  EXPECT_EQ(tables.partialsOffset, 128u);
  EXPECT_EQ(tables.squaredNormOffset, 8320u);
  EXPECT_EQ(tables.nonFiniteOffset, 8324u);
  EXPECT_EQ(tables.bytes, 8328u);
}

TEST_F(AdamWTest, MatchesCpuBitForBit) {
  // Parameter region: [unused 13][A: 40000, decay][B: 768, no decay]; state region: [B][A].
  const int64_t countA = 40000, countB = 768;
  const std::vector<AdamWParameter> parameters = {{13, countB, countA, true},
                                                  {13 + countA, 0, countB, false}};
  const int64_t paramCount = 13 + countA + countB, stateCount = countA + countB;
  std::vector<float> params = randomValues<float>(paramCount, 1);
  std::vector<float> m(stateCount, 0.0f), v(stateCount, 0.0f);

  const std::vector<AdamWChunk> chunks = adamwChunks(parameters, {-1, -1});
  DeviceArray<AdamWChunk> dChunks(chunks);
  DeviceArray<float> dParams(params), dM(m), dV(v), dGrads(stateCount);
  for (int64_t step = 1; step <= 3; ++step) {
    const std::vector<float> grads =
        randomValues<float>(stateCount, uint32_t(10 + step), -0.1f, 0.1f);
    const cpu::AdamWConfig config{2e-5 * double(step), 0.9, 0.999, 1e-8, 0.01, step};
    for (const AdamWParameter &p : parameters) {
      cpu::AdamWConfig own = config;
      own.weightDecay = p.decay ? config.weightDecay : 0.0;
      cpu::adamwUpdate(params.data() + p.paramOffset, grads.data() + p.stateOffset,
                       m.data() + p.stateOffset, v.data() + p.stateOffset, p.count, own);
    }
    BERTC_CUDA_CHECK(cudaMemcpy(dGrads.get(), grads.data(), grads.size() * sizeof(float),
                                cudaMemcpyHostToDevice));
    cuda::adamwUpdate(dParams.get(), dGrads.get(), dM.get(), dV.get(), dChunks.get(),
                      int64_t(chunks.size()), config, nullptr);
  }
  expectBitIdentical(dParams.download(), params, "params");
  expectBitIdentical(dM.download(), m, "m");
  expectBitIdentical(dV.download(), v, "v");
}

/// fp32 values [A: 16-bit, three chunks][B: fp32, no working copy][C: 16-bit, one chunk];
/// working copies [7 spare][C][9 spare][A][3 spare], in another order than the masters and
/// with gaps that must keep their values.
template <typename T> void checkWorkingCopies(const char *name) {
  const int64_t countA = 2 * kAdamWChunkElements + 5, countB = 768, countC = 300;
  const std::vector<AdamWParameter> parameters = {{0, 0, countA, true},
                                                  {countA, countA, countB, false},
                                                  {countA + countB, countA + countB, countC, true}};
  const int64_t count = countA + countB + countC;
  const int64_t workingC = 7, workingA = workingC + countC + 9,
                workingCount = workingA + countA + 3;
  const std::vector<AdamWChunk> chunks = adamwChunks(parameters, {workingA, -1, workingC});
  std::vector<float> params = randomValues<float>(count, 7, -3.0f, 3.0f);
  const std::vector<float> grads = randomValues<float>(count, 8, -0.1f, 0.1f);
  std::vector<float> m(count, 0.0f), v(count, 0.0f);
  const std::vector<T> spare(workingCount, fromFloat<T>(42.0f));
  DeviceArray<float> dParams(params), dGrads(grads), dM(m), dV(v);
  DeviceArray<T> dWorking(spare);
  DeviceArray<AdamWChunk> dChunks(chunks);

  const cpu::AdamWConfig config{1e-3, 0.9, 0.999, 1e-8, 0.01, 1};
  for (const AdamWParameter &p : parameters) {
    cpu::AdamWConfig own = config;
    own.weightDecay = p.decay ? config.weightDecay : 0.0;
    cpu::adamwUpdate(params.data() + p.paramOffset, grads.data() + p.stateOffset,
                     m.data() + p.stateOffset, v.data() + p.stateOffset, p.count, own);
  }
  std::vector<T> expected = spare;
  cpu::convert(params.data(), expected.data() + workingA, countA);
  cpu::convert(params.data() + countA + countB, expected.data() + workingC, countC);

  cuda::adamwUpdate(dParams.get(), dGrads.get(), dM.get(), dV.get(), dWorking.get(), dChunks.get(),
                    int64_t(chunks.size()), config, nullptr);
  expectBitIdentical(dParams.download(), params, std::string("masters, ") + name);
  expectBitIdentical(dWorking.download(), expected, std::string("working copies, ") + name);
}

TEST_F(AdamWTest, RewritesEveryWorkingCopyInTheSameLaunch) {
  checkWorkingCopies<bf16>("bf16");
  checkWorkingCopies<fp16>("fp16");
}

/// Three steps of one parameter of 5000 values (several blocks of the grid-stride loop) on
/// the CPU (update, then convert) and on the device (one launch): its master, moments and
/// a working copy that starts one element into its array, the elements around it kept.
template <typename T> void checkParameterUpdate(const char *name) {
  const int64_t n = 5000;
  std::vector<float> master = randomValues<float>(n, 21, -3.0f, 3.0f);
  std::vector<float> m(n, 0.0f), v(n, 0.0f);
  std::vector<T> working(n + 2, fromFloat<T>(42.0f));
  DeviceArray<float> dMaster(master), dM(m), dV(v), dGrad(n);
  DeviceArray<T> dWorking(working);
  for (int64_t step = 1; step <= 3; ++step) {
    const std::vector<float> grad = randomValues<float>(n, uint32_t(30 + step), -0.1f, 0.1f);
    const cpu::AdamWConfig config{1e-3, 0.9, 0.999, 1e-8, 0.01, step};
    cpu::adamwUpdate(master.data(), grad.data(), m.data(), v.data(), n, config);
    cpu::convert(master.data(), working.data() + 1, n);
    BERTC_CUDA_CHECK(
        cudaMemcpy(dGrad.get(), grad.data(), grad.size() * sizeof(float), cudaMemcpyHostToDevice));
    cuda::adamwUpdate(dMaster.get(), dGrad.get(), dM.get(), dV.get(), dWorking.get() + 1, n, config,
                      nullptr);
  }
  expectBitIdentical(dMaster.download(), master, std::string("master, ") + name);
  expectBitIdentical(dM.download(), m, std::string("m, ") + name);
  expectBitIdentical(dV.download(), v, std::string("v, ") + name);
  expectBitIdentical(dWorking.download(), working, std::string("working copy, ") + name);
}

TEST_F(AdamWTest, OneParametersUpdateRewritesItsWorkingCopyInTheSameLaunch) {
  checkParameterUpdate<bf16>("bf16");
  checkParameterUpdate<fp16>("fp16");
}

} // namespace
} // namespace bertc::cuda::test
