// CUDA 8-bit AdamW against the CPU twin, bit for bit: parameters, codes and absmaxes after
// three steps from a random state (in the blocks of 2048 every code occurs, so both maps the
// blocks build in shared memory are checked entry by entry), for both block sizes, with and
// without weight decay, over several blocks and a partial last one, with the state at offsets
// that leave the codes unaligned; a 16-bit working copy rewritten in the same launch, as
// the CPU converts it after its update; and a group of parameters in a few launches.
#include "cuda_test_support.h"

#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_kernels.h"

#include <type_traits>

namespace bertc::cuda::test {
namespace {

class AdamW8bitTest : public CudaTest {};

/// `count` random bytes.
std::vector<uint8_t> randomCodes(size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_int_distribution<int> code(0, 255);
  std::vector<uint8_t> codes(count);
  for (uint8_t &value : codes)
    value = uint8_t(code(generator));
  return codes;
}

/// Three steps of one parameter of n values on the CPU and the device, from the same random
/// state; param, codes and absmaxes start `offset` elements into their arrays. With a
/// 16-bit T the parameter is a master whose working copy (also at `offset`) the device
/// rewrites in the update's launch and the CPU converts after its update; with float there
/// is none.
template <typename T = float>
void expectTwinsAgree(QuantBlockSize blockSize, int64_t n, double weightDecay) {
  constexpr bool kWorkingCopy = !std::is_same_v<T, float>;
  const int64_t offset = 3, blocks = quantBlockCount(n, blockSize);
  std::vector<float> param = randomValues<float>(offset + n, 1);
  std::vector<uint8_t> mCodes = randomCodes(offset + n, 2), vCodes = randomCodes(offset + n, 3);
  std::vector<float> mAbsmax = randomValues<float>(offset + blocks, 4, 0.0f, 0.1f);
  std::vector<float> vAbsmax = randomValues<float>(offset + blocks, 5, 0.0f, 1e-3f);

  std::vector<T> working(offset + n, fromFloat<T>(42.0f));
  DeviceArray<float> dParam(param), dMAbsmax(mAbsmax), dVAbsmax(vAbsmax), dGrad(n);
  DeviceArray<T> dWorking(working);
  DeviceArray<uint8_t> dMCodes(mCodes), dVCodes(vCodes);
  const AdamW8bitState cpuState{mCodes.data() + offset, vCodes.data() + offset,
                                mAbsmax.data() + offset, vAbsmax.data() + offset};
  const AdamW8bitState deviceState{dMCodes.get() + offset, dVCodes.get() + offset,
                                   dMAbsmax.get() + offset, dVAbsmax.get() + offset};
  for (int64_t step = 1; step <= 3; ++step) {
    // Gradients of a different scale in each block.
    std::vector<float> grad = randomValues<float>(n, uint32_t(10 + step), -1.0f, 1.0f);
    for (int64_t i = 0; i < n; ++i)
      grad[i] *= std::pow(10.0f, float(i / int64_t(blockSize) % 4) - 3.0f);
    const cpu::AdamWConfig config{1e-3, 0.9, 0.999, 1e-8, weightDecay, step};
    cpu::adamw8bitUpdate(param.data() + offset, grad.data(), cpuState, n, blockSize, config);
    BERTC_CUDA_CHECK(
        cudaMemcpy(dGrad.get(), grad.data(), grad.size() * sizeof(float), cudaMemcpyHostToDevice));
    if constexpr (kWorkingCopy) {
      cpu::convert(param.data() + offset, working.data() + offset, n);
      cuda::adamw8bitUpdate(dParam.get() + offset, dGrad.get(), deviceState,
                            dWorking.get() + offset, n, blockSize, config, nullptr);
    } else {
      cuda::adamw8bitUpdate(dParam.get() + offset, dGrad.get(), deviceState, n, blockSize, config,
                            nullptr);
    }
  }
  expectBitIdentical(dParam.download(), param, "param");
  expectBitIdentical(dMCodes.download(), mCodes, "m codes");
  expectBitIdentical(dVCodes.download(), vCodes, "v codes");
  expectBitIdentical(dMAbsmax.download(), mAbsmax, "m absmax");
  expectBitIdentical(dVAbsmax.download(), vAbsmax, "v absmax");
  expectBitIdentical(dWorking.download(), working, "working copy");
}

// Blocks of 2048 (8 values a thread): three full blocks and one of 777.
TEST_F(AdamW8bitTest, MatchesCpuBitForBitInBlocksOf2048) {
  expectTwinsAgree(QuantBlockSize::k2048, 3 * 2048 + 777, 0.01);
  expectTwinsAgree(QuantBlockSize::k2048, 3 * 2048 + 777, 0.0);
}

// Blocks of 256 (a value a thread): five full blocks and one of 13.
TEST_F(AdamW8bitTest, MatchesCpuBitForBitInBlocksOf256) {
  expectTwinsAgree(QuantBlockSize::k256, 5 * 256 + 13, 0.01);
  expectTwinsAgree(QuantBlockSize::k256, 5 * 256 + 13, 0.0);
}

// A bf16 and an fp16 master, blocks of both sizes.
TEST_F(AdamW8bitTest, RewritesTheWorkingCopyInTheSameLaunch) {
  expectTwinsAgree<bf16>(QuantBlockSize::k2048, 2 * 2048 + 777, 0.01);
  expectTwinsAgree<fp16>(QuantBlockSize::k256, 5 * 256 + 13, 0.0);
}

// 45 parameters (two group launches) of 1 to 4,971 values, some under a block, one of
// exactly a block, some of several with a partial last one, decaying or not, all but every
// fifth with a bf16 working copy, packed one after another: after two steps the master,
// codes, absmaxes and working copies are bit-identical to the CPU twin's update of each.
TEST_F(AdamW8bitTest, GroupMatchesEachParametersUpdate) {
  const QuantBlockSize blockSize = QuantBlockSize::k256;
  const int64_t count = 45;
  std::vector<int64_t> sizes, offsets, blockOffsets;
  int64_t total = 0, totalBlocks = 0;
  for (int64_t p = 0; p < count; ++p) {
    sizes.push_back(p == 0 ? 256 : p % 4 == 1 ? p : (p * 997) % 5000 + 1);
    offsets.push_back(total);
    blockOffsets.push_back(totalBlocks);
    total += sizes.back();
    totalBlocks += quantBlockCount(sizes.back(), blockSize);
  }
  std::vector<float> param = randomValues<float>(total, 41);
  std::vector<uint8_t> mCodes = randomCodes(total, 42), vCodes = randomCodes(total, 43);
  std::vector<float> mAbsmax = randomValues<float>(totalBlocks, 44, 0.0f, 0.1f);
  std::vector<float> vAbsmax = randomValues<float>(totalBlocks, 45, 0.0f, 1e-3f);
  std::vector<bf16> working(total, fromFloat<bf16>(42.0f));
  DeviceArray<float> dParam(param), dMAbsmax(mAbsmax), dVAbsmax(vAbsmax), dGrad(total);
  DeviceArray<uint8_t> dMCodes(mCodes), dVCodes(vCodes);
  DeviceArray<bf16> dWorking(working);
  const auto hasCopy = [](int64_t p) { return p % 5 != 0; };
  const auto decays = [](int64_t p) { return p % 2 == 0; };
  std::vector<AdamW8bitParameter<bf16>> group;
  for (int64_t p = 0; p < count; ++p) {
    const int64_t at = offsets[p], block = blockOffsets[p];
    group.push_back(
        {dParam.get() + at,
         dGrad.get() + at,
         {dMCodes.get() + at, dVCodes.get() + at, dMAbsmax.get() + block, dVAbsmax.get() + block},
         hasCopy(p) ? dWorking.get() + at : nullptr,
         sizes[p],
         decays(p)});
  }
  for (int64_t step = 1; step <= 2; ++step) {
    const std::vector<float> grad = randomValues<float>(total, uint32_t(50 + step), -0.1f, 0.1f);
    const cpu::AdamWConfig config{1e-3, 0.9, 0.999, 1e-8, 0.01, step};
    for (int64_t p = 0; p < count; ++p) {
      const int64_t at = offsets[p], block = blockOffsets[p];
      const AdamW8bitState state{mCodes.data() + at, vCodes.data() + at, mAbsmax.data() + block,
                                 vAbsmax.data() + block};
      cpu::AdamWConfig own = config;
      own.weightDecay = decays(p) ? config.weightDecay : 0.0;
      if (hasCopy(p))
        cpu::adamw8bitUpdate(param.data() + at, grad.data() + at, state, working.data() + at,
                             sizes[p], blockSize, own);
      else
        cpu::adamw8bitUpdate(param.data() + at, grad.data() + at, state, sizes[p], blockSize, own);
    }
    BERTC_CUDA_CHECK(
        cudaMemcpy(dGrad.get(), grad.data(), grad.size() * sizeof(float), cudaMemcpyHostToDevice));
    cuda::adamw8bitUpdate(group.data(), count, blockSize, config, nullptr);
  }
  expectBitIdentical(dParam.download(), param, "param");
  expectBitIdentical(dMCodes.download(), mCodes, "m codes");
  expectBitIdentical(dVCodes.download(), vCodes, "v codes");
  expectBitIdentical(dMAbsmax.download(), mAbsmax, "m absmax");
  expectBitIdentical(dVAbsmax.download(), vAbsmax, "v absmax");
  expectBitIdentical(dWorking.download(), working, "working copies");
}

} // namespace
} // namespace bertc::cuda::test
