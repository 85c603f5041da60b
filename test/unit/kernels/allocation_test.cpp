// Checks that no kernel allocates: this file replaces the global operator new for the whole
// test binary with one that counts calls, then runs every kernel once between two readings of
// the counter. (Allocations inside OpenBLAS, a C library, are outside what this can see.)
#include "bertc/abi/kernel_workspace.h"
#include "bertc/runtime/cpu_kernels.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

namespace {
std::atomic<int64_t> allocationCount{0};
} // namespace

void *operator new(std::size_t bytes) {
  ++allocationCount;
  if (void *memory = std::malloc(bytes ? bytes : 1))
    return memory;
  std::abort(); // out of memory in a test binary: nothing sensible to recover
}
void *operator new[](std::size_t bytes) { return operator new(bytes); }
// Never inlined: GCC would see free() on memory from operator new, not knowing that both
// are these replacements, and warn (-Wmismatched-new-delete).
__attribute__((noinline)) void operator delete(void *memory) noexcept { std::free(memory); }
__attribute__((noinline)) void operator delete[](void *memory) noexcept { std::free(memory); }
__attribute__((noinline)) void operator delete(void *memory, std::size_t) noexcept {
  std::free(memory);
}
__attribute__((noinline)) void operator delete[](void *memory, std::size_t) noexcept {
  std::free(memory);
}

using namespace bertc::cpu;

TEST(NoAllocation, EveryKernelRunsWithoutOperatorNew) {
  const int64_t batch = 2, seq = 8, hidden = 16, heads = 4, vocab = 10, classes = 3;
  const int64_t tokens = batch * seq, n = tokens * hidden;
  std::vector<float> x(n, 0.5f), y(n), dx(n), dy(n, 0.25f), w(hidden * hidden, 0.1f);
  std::vector<float> b(hidden, 0.0f), gamma(hidden, 1.0f), table(vocab * hidden, 0.3f);
  std::vector<float> dtable(vocab * hidden), dw(hidden * hidden), db(hidden);
  std::vector<float> q(n, 0.1f), k(n, 0.2f), v(n, 0.3f), dq(n), dk(n), dv(n);
  std::vector<float> scratch(attentionScratchFloats(seq)), logits(batch * classes, 0.0f);
  std::vector<float> lse(batch * heads * seq);
  const int64_t headChunk = 3; // a partial last chunk of the 4 heads
  std::vector<float> workspace(
      bertc::cuda::attentionBackwardWorkspaceBytes(headChunk, batch, heads, seq, /*dropout=*/true) /
      sizeof(float));
  std::vector<float> dlogits(batch * classes), m(n, 0.0f), variance(n, 0.0f);
  std::vector<int32_t> ids(tokens, 3), mask(tokens, 1), labels(batch, 1);
  float loss = 0.0f, dloss = 1.0f;
  const AdamWConfig config{1e-3, 0.9, 0.999, 1e-8, 0.01, 1};

  const int64_t before = allocationCount.load();
  embeddingForward(ids.data(), table.data(), y.data(), tokens, hidden);
  embeddingBackward(ids.data(), dy.data(), dtable.data(), tokens, vocab, hidden, -1);
  add(x.data(), y.data(), y.data(), n);
  layerNormForward(x.data(), gamma.data(), b.data(), y.data(), tokens, hidden, 1e-12f);
  layerNormBackward(dy.data(), x.data(), gamma.data(), dx.data(), dw.data(), db.data(), tokens,
                    hidden, 1e-12f);
  linearForward(x.data(), w.data(), b.data(), y.data(), tokens, hidden, hidden);
  linearBackwardInput(dy.data(), w.data(), dx.data(), tokens, hidden, hidden);
  linearBackwardWeight(dy.data(), x.data(), dw.data(), tokens, hidden, hidden);
  biasBackward(dy.data(), db.data(), tokens, hidden);
  geluForward(x.data(), y.data(), n);
  geluBackward(dy.data(), x.data(), dx.data(), n);
  tanhForward(x.data(), y.data(), n);
  tanhBackward(dy.data(), y.data(), dx.data(), n);
  reluForward(x.data(), y.data(), n);
  reluBackward(dy.data(), y.data(), dx.data(), n);
  dropoutForward(x.data(), y.data(), batch, n / batch, 0.1f, {1, 1, 1, 0});
  dropoutBackward(dy.data(), dx.data(), batch, n / batch, 0.1f, {1, 1, 1, 0});
  attentionForward(q.data(), k.data(), v.data(), mask.data(), y.data(), lse.data(), scratch.data(),
                   batch, seq, hidden, heads, 0.1f, {1, 1, 2, 0});
  attentionBackward(dy.data(), q.data(), k.data(), v.data(), mask.data(), y.data(), lse.data(),
                    dq.data(), dk.data(), dv.data(), scratch.data(), batch, seq, hidden, heads,
                    0.1f, {1, 1, 2, 0});
  chunkedAttentionForward(q.data(), k.data(), v.data(), mask.data(), y.data(), lse.data(),
                          workspace.data(), headChunk, batch, seq, hidden, heads, 0.1f,
                          {1, 1, 2, 0});
  chunkedAttentionBackward(dy.data(), q.data(), k.data(), v.data(), mask.data(), y.data(),
                           lse.data(), workspace.data(), dq.data(), dk.data(), dv.data(), headChunk,
                           batch, seq, hidden, heads, 0.1f, {1, 1, 2, 0});
  selectTokenForward(x.data(), y.data(), batch, seq, hidden, 0);
  selectTokenBackward(dy.data(), dx.data(), batch, seq, hidden, 0);
  meanTokensForward(x.data(), mask.data(), y.data(), batch, seq, hidden);
  meanTokensBackward(dy.data(), mask.data(), dx.data(), batch, seq, hidden);
  crossEntropyForward(logits.data(), labels.data(), &loss, batch, classes, float(batch));
  crossEntropyBackward(&dloss, logits.data(), labels.data(), dlogits.data(), batch, classes,
                       float(batch));
  accumulate(dx.data(), dy.data(), n);
  adamwUpdate(x.data(), dy.data(), m.data(), variance.data(), n, config);
  const int64_t after = allocationCount.load();

  EXPECT_EQ(after, before);
  // The counter is live: the same reading around an allocation moves it.
  std::vector<float> *probe = new std::vector<float>(4);
  EXPECT_GT(allocationCount.load(), after);
  delete probe;
}
