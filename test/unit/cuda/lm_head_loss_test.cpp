// The CUDA LM head loss (cuBLASLt GEMMs per chunk, a block per row) against its CPU twin
// in each storage type: 37 tokens in chunks of 16 (a short last chunk), a vocabulary of
// 301 (rows longer than a block's 256 threads, not a multiple of them), ignored labels; the
// loss, d hidden, and d weight overwritten, added into a slot and skipped. The log-sum-exp
// sums in another order (a tree of fp32 partial sums where the CPU adds in double) and the
// GEMMs add their products in another order: fp32 agrees to a few ulps; 16-bit storage
// rounds the logits' gradients to T on both, so a value at a rounding boundary may land
// one step of T apart (Tolerance).
#include "cuda_test_support.h"

#include "bertc/abi/lm_head_loss.h"
#include "bertc/runtime/cpu_kernels.h"
#include "bertc/runtime/cuda_gemm.h"
#include "bertc/runtime/cuda_kernels.h"

namespace bertc::cuda::test {
namespace {

template <typename T> class LmHeadLossTest : public CudaTypedTest<T> {
protected:
  void SetUp() override {
    CudaTypedTest<T>::SetUp();
    if (!this->IsSkipped() && std::is_same_v<T, bf16> && deviceMajorVersion() < 8)
      GTEST_SKIP() << "bf16 GEMMs need sm_80 or newer";
  }
};
TYPED_TEST_SUITE(LmHeadLossTest, StorageTypes, StorageTypeNames);

constexpr int64_t kTokens = 37, kWidth = 24, kVocab = 301, kChunk = 16;

TYPED_TEST(LmHeadLossTest, MatchesCpu) {
  using T = TypeParam;
  const auto hidden = randomValues<T>(size_t(kTokens * kWidth), 1, -2.0f, 2.0f);
  const auto weight = randomValues<T>(size_t(kVocab * kWidth), 2);
  std::vector<int32_t> labels(kTokens);
  for (int64_t t = 0; t < kTokens; ++t)
    labels[t] = t % 7 == 3 ? -100 : t % 11 == 5 ? int32_t(kVocab) : int32_t((t * 37) % kVocab);
  const std::vector<float> dloss = {2.5f}, slotStart = randomValues<float>(kVocab * kWidth, 3);
  const float normalizer = 29.0f;
  const size_t workspaceFloats =
      size_t(lmHeadLossForwardWorkspaceBytes(kChunk, kVocab, kTokens) / int64_t(sizeof(float)));

  std::vector<float> workspace(workspaceFloats), dweight(kVocab * kWidth), slot = slotStart;
  std::vector<T> dhidden(kTokens * kWidth);
  float loss = 0;
  cpu::lmHeadLossForward(hidden.data(), weight.data(), labels.data(), &loss, workspace.data(),
                         kTokens, kWidth, kVocab, kChunk, normalizer);
  cpu::lmHeadLossBackward(dloss.data(), hidden.data(), weight.data(), labels.data(), dhidden.data(),
                          dweight.data(), workspace.data(), kTokens, kWidth, kVocab, kChunk,
                          normalizer);
  cpu::lmHeadLossBackwardAccumulate(dloss.data(), hidden.data(), weight.data(), labels.data(),
                                    dhidden.data(), slot.data(), workspace.data(), kTokens, kWidth,
                                    kVocab, kChunk, normalizer);

  DeviceArray<T> dHidden(hidden), dWeight(weight), dDhidden(kTokens * kWidth),
      dDhiddenAlone(kTokens * kWidth);
  DeviceArray<int32_t> dLabels(labels);
  DeviceArray<float> dWorkspace(workspaceFloats), dLoss(1), dDloss(dloss),
      dDweight(kVocab * kWidth), dSlot(slotStart);
  DeviceArray<std::byte> gemmWorkspace(kCudaWorkspaceBytes);
  LinearGemms gemms(gemmWorkspace.get(), nullptr);
  cuda::lmHeadLossForward(gemms, dHidden.get(), dWeight.get(), dLabels.get(), dLoss.get(),
                          dWorkspace.get(), kTokens, kWidth, kVocab, kChunk, normalizer);
  cuda::lmHeadLossBackward(gemms, dDloss.get(), dHidden.get(), dWeight.get(), dLabels.get(),
                           dDhidden.get(), dDweight.get(), dWorkspace.get(), kTokens, kWidth,
                           kVocab, kChunk, normalizer);
  cuda::lmHeadLossBackwardAccumulate(gemms, dDloss.get(), dHidden.get(), dWeight.get(),
                                     dLabels.get(), dDhidden.get(), dSlot.get(), dWorkspace.get(),
                                     kTokens, kWidth, kVocab, kChunk, normalizer);
  cuda::lmHeadLossBackward(gemms, dDloss.get(), dHidden.get(), dWeight.get(), dLabels.get(),
                           dDhiddenAlone.get(), static_cast<float *>(nullptr), dWorkspace.get(),
                           kTokens, kWidth, kVocab, kChunk, normalizer);

  // The loss is fp32 whatever T: its inputs are the same stored values.
  expectClose(dLoss.download(), std::vector<float>{loss}, 1e-6, 1e-5, "loss");
  const double atol = std::is_same_v<T, float> ? 1e-5 : Tolerance<T>::atol;
  const double rtol = std::is_same_v<T, float> ? 1e-4 : Tolerance<T>::rtol;
  expectClose(dDhidden.download(), dhidden, atol, rtol, "dhidden");
  expectClose(dDhiddenAlone.download(), dhidden, atol, rtol, "dhidden without d weight");
  expectClose(dDweight.download(), dweight, atol, rtol, "dweight");
  expectClose(dSlot.download(), slot, atol, rtol, "dweight added into the slot");
}

} // namespace
} // namespace bertc::cuda::test
