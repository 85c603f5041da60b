// Every kernel templated on the storage type, run in bf16 and fp16 against the same kernel in
// fp32 on the same (already rounded) inputs. A 16-bit kernel loads exactly, computes in fp32
// and rounds once on store, so a 16-bit output must lie within one rounding of the fp32 one:
//   |out - ref| <= atol + rtol |ref|, rtol = 2^-8 (bf16) or 2^-11 (fp16), atol = 1e-6,
// (rtol is one unit in the last place; a correct rounding is within half of it). Outputs that
// stay fp32 (weight gradients) may only differ by the GEMM's summation order: rtol 1e-5 of
// the tensor's largest magnitude. Also: convert, accumulate and the loss-scaling check.
#include "bertc/runtime/cpu_kernels.h"
#include "gradient_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace bertc;
using namespace bertc::cpu;
using bertc::test::randomTensor;

namespace {

template <typename T> constexpr double kRtol = 0;
template <> constexpr double kRtol<bf16> = 1.0 / 256;
template <> constexpr double kRtol<fp16> = 1.0 / 2048;
constexpr double kAtol = 1e-6;

/// `values` rounded to T, and the same rounded values as floats (the fp32 kernels' input).
template <typename T> struct Stored {
  std::vector<T> storage;
  std::vector<float> asFloat;
};

template <typename T> Stored<T> stored(const std::vector<float> &values) {
  Stored<T> result;
  for (float value : values) {
    result.storage.push_back(fromFloat<T>(value));
    result.asFloat.push_back(toFloat(result.storage.back()));
  }
  return result;
}

template <typename T> std::vector<float> widen(const std::vector<T> &values) {
  std::vector<float> result;
  for (T value : values)
    result.push_back(toFloat(value));
  return result;
}

/// A 16-bit output against the fp32 kernel's: within one rounding.
template <typename T>
void expectOneRounding(const std::vector<T> &actual, const std::vector<float> &reference,
                       const char *what) {
  ASSERT_EQ(actual.size(), reference.size()) << what;
  for (size_t i = 0; i < reference.size(); ++i)
    ASSERT_LE(std::abs(toFloat(actual[i]) - reference[i]),
              kAtol + kRtol<T> * std::abs(reference[i]))
        << what << "[" << i << "]: " << toFloat(actual[i]) << " vs " << reference[i];
}

/// An fp32 output computed from 16-bit inputs: the same sums in another order.
void expectSameSums(const std::vector<float> &actual, const std::vector<float> &reference,
                    const char *what) {
  float largest = 0;
  for (float value : reference)
    largest = std::max(largest, std::abs(value));
  for (size_t i = 0; i < reference.size(); ++i)
    ASSERT_NEAR(actual[i], reference[i], 1e-5 * largest + 1e-7) << what << "[" << i << "]";
}

template <typename T> class MixedPrecisionKernel : public ::testing::Test {};
using StorageTypes = ::testing::Types<bf16, fp16>;
TYPED_TEST_SUITE(MixedPrecisionKernel, StorageTypes);

} // namespace

// Sizes cross the blocked GEMM's 128 x 128 x 256 tiles in every dimension.
TYPED_TEST(MixedPrecisionKernel, Linear) {
  using T = TypeParam;
  const int64_t rows = 130, in = 300, out = 140;
  auto x = stored<T>(randomTensor(rows * in, 1)),
       w = stored<T>(randomTensor(out * in, 2, -0.1f, 0.1f));
  auto b = stored<T>(randomTensor(out, 3)), dy = stored<T>(randomTensor(rows * out, 4));
  std::vector<float> y32(rows * out), dx32(rows * in), dw32(out * in), db32(out);
  linearForward(x.asFloat.data(), w.asFloat.data(), b.asFloat.data(), y32.data(), rows, in, out);
  linearBackwardInput(dy.asFloat.data(), w.asFloat.data(), dx32.data(), rows, in, out);
  linearBackwardWeight(dy.asFloat.data(), x.asFloat.data(), dw32.data(), rows, in, out);
  biasBackward(dy.asFloat.data(), db32.data(), rows, out);
  std::vector<T> y(rows * out), dx(rows * in);
  std::vector<float> dw(out * in), db(out);
  linearForward(x.storage.data(), w.storage.data(), b.storage.data(), y.data(), rows, in, out);
  linearBackwardInput(dy.storage.data(), w.storage.data(), dx.data(), rows, in, out);
  linearBackwardWeight(dy.storage.data(), x.storage.data(), dw.data(), rows, in, out);
  biasBackward(dy.storage.data(), db.data(), rows, out);
  expectOneRounding(y, y32, "y");
  expectOneRounding(dx, dx32, "dx");
  expectSameSums(dw, dw32, "dw");
  expectSameSums(db, db32, "db");
}

TYPED_TEST(MixedPrecisionKernel, LayerNorm) {
  using T = TypeParam;
  const int64_t rows = 6, cols = 40;
  auto x = stored<T>(randomTensor(rows * cols, 5, -2, 2)),
       dy = stored<T>(randomTensor(rows * cols, 6));
  auto gamma = stored<T>(randomTensor(cols, 7, 0.5f, 1.5f)),
       beta = stored<T>(randomTensor(cols, 8));
  std::vector<float> y32(rows * cols), dx32(rows * cols), dg32(cols), db32(cols);
  layerNormForward(x.asFloat.data(), gamma.asFloat.data(), beta.asFloat.data(), y32.data(), rows,
                   cols, 1e-5f);
  layerNormBackward(dy.asFloat.data(), x.asFloat.data(), gamma.asFloat.data(), dx32.data(),
                    dg32.data(), db32.data(), rows, cols, 1e-5f);
  std::vector<T> y(rows * cols), dx(rows * cols);
  std::vector<float> dg(cols), db(cols);
  layerNormForward(x.storage.data(), gamma.storage.data(), beta.storage.data(), y.data(), rows,
                   cols, 1e-5f);
  layerNormBackward(dy.storage.data(), x.storage.data(), gamma.storage.data(), dx.data(), dg.data(),
                    db.data(), rows, cols, 1e-5f);
  expectOneRounding(y, y32, "y");
  expectOneRounding(dx, dx32, "dx");
  expectSameSums(dg, dg32, "dgamma");
  expectSameSums(db, db32, "dbeta");
}

TYPED_TEST(MixedPrecisionKernel, Elementwise) {
  using T = TypeParam;
  const int64_t n = 500;
  auto a = stored<T>(randomTensor(n, 9, -3, 3)), b = stored<T>(randomTensor(n, 10, -3, 3));
  auto dy = stored<T>(randomTensor(n, 11));
  auto check = [&](auto kernel32, auto kernel16, const char *what) {
    std::vector<float> ref(n);
    std::vector<T> out(n);
    kernel32(ref.data());
    kernel16(out.data());
    expectOneRounding(out, ref, what);
  };
  check([&](float *o) { add(a.asFloat.data(), b.asFloat.data(), o, n); },
        [&](T *o) { add(a.storage.data(), b.storage.data(), o, n); }, "add");
  check([&](float *o) { geluForward(a.asFloat.data(), o, n); },
        [&](T *o) { geluForward(a.storage.data(), o, n); }, "gelu");
  check([&](float *o) { geluBackward(dy.asFloat.data(), a.asFloat.data(), o, n); },
        [&](T *o) { geluBackward(dy.storage.data(), a.storage.data(), o, n); }, "gelu_grad");
  check([&](float *o) { geluTanhForward(a.asFloat.data(), o, n); },
        [&](T *o) { geluTanhForward(a.storage.data(), o, n); }, "gelu tanh");
  check([&](float *o) { geluTanhBackward(dy.asFloat.data(), a.asFloat.data(), o, n); },
        [&](T *o) { geluTanhBackward(dy.storage.data(), a.storage.data(), o, n); },
        "gelu tanh grad");
  check([&](float *o) { tanhForward(a.asFloat.data(), o, n); },
        [&](T *o) { tanhForward(a.storage.data(), o, n); }, "tanh");
  check([&](float *o) { tanhBackward(dy.asFloat.data(), a.asFloat.data(), o, n); },
        [&](T *o) { tanhBackward(dy.storage.data(), a.storage.data(), o, n); }, "tanh_grad");
  const DropoutKey key{7, 3, 2, 0};
  check([&](float *o) { dropoutForward(a.asFloat.data(), o, 5, 100, 0.25f, key); },
        [&](T *o) { dropoutForward(a.storage.data(), o, 5, 100, 0.25f, key); }, "dropout");
  check([&](float *o) { dropoutBackward(dy.asFloat.data(), o, 5, 100, 0.25f, key); },
        [&](T *o) { dropoutBackward(dy.storage.data(), o, 5, 100, 0.25f, key); }, "dropout_grad");
}

// Gathers and copies move stored values: bit-exact.
TYPED_TEST(MixedPrecisionKernel, EmbeddingSelectTokenFlatten) {
  using T = TypeParam;
  const int64_t batch = 3, seq = 4, hidden = 6, vocab = 5;
  auto table = stored<T>(randomTensor(vocab * hidden, 12));
  auto x = stored<T>(randomTensor(batch * seq * hidden, 13));
  std::vector<int32_t> ids = {0, 4, 2, 2, 1, 3, 0, 0, 4, 4, 1, 2};
  std::vector<float> e32(batch * seq * hidden), sel32(batch * hidden), flat32(batch * 5 * hidden),
      dtable32(vocab * hidden), dtable(vocab * hidden);
  std::vector<T> e(e32.size()), sel(sel32.size()), flat(flat32.size());
  embeddingForward(ids.data(), table.asFloat.data(), e32.data(), batch * seq, hidden);
  embeddingForward(ids.data(), table.storage.data(), e.data(), batch * seq, hidden);
  selectTokenForward(x.asFloat.data(), sel32.data(), batch, seq, hidden, 1);
  selectTokenForward(x.storage.data(), sel.data(), batch, seq, hidden, 1);
  flattenForward(x.asFloat.data(), flat32.data(), batch, seq, 5, hidden);
  flattenForward(x.storage.data(), flat.data(), batch, seq, 5, hidden);
  EXPECT_EQ(widen(e), e32);
  EXPECT_EQ(widen(sel), sel32);
  EXPECT_EQ(widen(flat), flat32);
  embeddingBackward(ids.data(), x.asFloat.data(), dtable32.data(), batch * seq, vocab, hidden, -1);
  embeddingBackward(ids.data(), x.storage.data(), dtable.data(), batch * seq, vocab, hidden, -1);
  expectSameSums(dtable, dtable32, "dtable");
}

TYPED_TEST(MixedPrecisionKernel, Attention) {
  using T = TypeParam;
  const int64_t batch = 2, seq = 7, hidden = 12, heads = 3, n = batch * seq * hidden;
  auto q = stored<T>(randomTensor(n, 14)), k = stored<T>(randomTensor(n, 15));
  auto v = stored<T>(randomTensor(n, 16)), dctx = stored<T>(randomTensor(n, 17));
  std::vector<int32_t> mask = {1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1};
  std::vector<float> scratch(attentionScratchFloats(seq));
  const DropoutKey key{1, 2, 3, 0};
  // The forwards see the same (rounded) inputs, so their lse agree exactly and ctx is one
  // rounding apart; the backwards then read the same ctx (the stored one, widened) and lse.
  std::vector<float> ctx32(n), dq32(n), dk32(n), dv32(n), lse32(batch * heads * seq);
  std::vector<float> lse(batch * heads * seq);
  attentionForward(q.asFloat.data(), k.asFloat.data(), v.asFloat.data(), mask.data(), ctx32.data(),
                   lse32.data(), scratch.data(), batch, seq, hidden, heads, 0.1f, key);
  std::vector<T> ctx(n), dq(n), dk(n), dv(n);
  attentionForward(q.storage.data(), k.storage.data(), v.storage.data(), mask.data(), ctx.data(),
                   lse.data(), scratch.data(), batch, seq, hidden, heads, 0.1f, key);
  EXPECT_EQ(lse, lse32);
  const std::vector<float> storedCtx = widen(ctx);
  attentionBackward(dctx.asFloat.data(), q.asFloat.data(), k.asFloat.data(), v.asFloat.data(),
                    mask.data(), storedCtx.data(), lse.data(), dq32.data(), dk32.data(),
                    dv32.data(), scratch.data(), batch, seq, hidden, heads, 0.1f, key);
  attentionBackward(dctx.storage.data(), q.storage.data(), k.storage.data(), v.storage.data(),
                    mask.data(), ctx.data(), lse.data(), dq.data(), dk.data(), dv.data(),
                    scratch.data(), batch, seq, hidden, heads, 0.1f, key);
  expectOneRounding(ctx, ctx32, "ctx");
  expectOneRounding(dq, dq32, "dq");
  expectOneRounding(dk, dk32, "dk");
  expectOneRounding(dv, dv32, "dv");
}

TYPED_TEST(MixedPrecisionKernel, ConvertAndAccumulate) {
  using T = TypeParam;
  std::vector<float> values = {1.0f, -0.1f, 3e-3f, 1234.5f, 0.0f};
  std::vector<T> narrowed(values.size());
  convert(values.data(), narrowed.data(), int64_t(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(narrowed[i].bits, fromFloat<T>(values[i]).bits);
  std::vector<float> widened(values.size()), grad = {1, 1, 1, 1, 1};
  convert(narrowed.data(), widened.data(), int64_t(values.size()));
  accumulate(narrowed.data(), grad.data(), int64_t(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(widened[i], toFloat(narrowed[i]));
    EXPECT_EQ(grad[i], 1.0f + toFloat(narrowed[i]));
  }
}

TEST(LossScaling, UnscaleDividesAndReportsFiniteGradients) {
  std::vector<float> grad = {65536.0f, -32768.0f, 0.0f, 1.0f};
  EXPECT_TRUE(unscaleGradients(grad.data(), 4, 1.0f / 65536));
  EXPECT_EQ(grad, (std::vector<float>{1.0f, -0.5f, 0.0f, 1.0f / 65536}));
}

TEST(LossScaling, UnscaleReportsInfAndNaN) {
  std::vector<float> withInf = {1.0f, std::numeric_limits<float>::infinity(), 2.0f};
  std::vector<float> withNaN = {1.0f, 2.0f, std::nanf("")};
  EXPECT_FALSE(unscaleGradients(withInf.data(), 3, 0.5f));
  EXPECT_FALSE(unscaleGradients(withNaN.data(), 3, 0.5f));
}
