// The simulated cuBLASLt against hand-computed results: a 2x3 by 3x2 product in every
// transpose combination, padded leading dimensions, alpha and beta, the bias, ReLU, GELU
// and bias-gradient epilogues, fp16 and bf16 rounding, strided batches
// (cublaslt_refusals_test.cpp has what a GPU refuses).
#include "cublaslt_fixture.h"

namespace bertc::sim::test {
namespace {

TEST_F(CublasLtTest, EveryTransposeCombinationGivesTheSameProduct) {
  for (cublasOperation_t transA : {CUBLAS_OP_N, CUBLAS_OP_T})
    for (cublasOperation_t transB : {CUBLAS_OP_N, CUBLAS_OP_T}) {
      SCOPED_TRACE("transA " + std::to_string(transA) + ", transB " + std::to_string(transB));
      describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F, transA, transB);
      ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
      DeviceBuffer<float> matrixA(transA == CUBLAS_OP_N ? kStoredA : kStoredAT);
      DeviceBuffer<float> matrixB(transB == CUBLAS_OP_N ? kStoredB : kStoredBT);
      DeviceBuffer<float> matrixD(std::vector<float>(4));
      ASSERT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get()), CUBLAS_STATUS_SUCCESS);
      EXPECT_EQ(matrixD.download(), kProduct);
    }
}

TEST_F(CublasLtTest, LeadingDimensionsSkipPaddingAndLeaveItUntouched) {
  describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F);
  setLayout(a, CUBLASLT_MATRIX_LAYOUT_LD, int64_t(4));
  setLayout(b, CUBLASLT_MATRIX_LAYOUT_LD, int64_t(5));
  setLayout(c, CUBLASLT_MATRIX_LAYOUT_LD, int64_t(3));
  setLayout(d, CUBLASLT_MATRIX_LAYOUT_LD, int64_t(3));
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  const float pad = 1000.0f, untouched = -7.0f;
  DeviceBuffer<float> matrixA({1, 4, pad, pad, 2, 5, pad, pad, 3, 6, pad, pad});
  DeviceBuffer<float> matrixB({7, 9, 11, pad, pad, 8, 10, 12, pad, pad});
  DeviceBuffer<float> matrixD(std::vector<float>(6, untouched));
  ASSERT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get()), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(matrixD.download(), (std::vector<float>{58, 139, untouched, 64, 154, untouched}));
}

TEST_F(CublasLtTest, AlphaScalesTheProductAndBetaAddsC) {
  describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F);
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  DeviceBuffer<float> matrixA(kStoredA), matrixB(kStoredB), matrixC({2, 4, 6, 8});
  DeviceBuffer<float> matrixD(std::vector<float>(4));
  ASSERT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get(), 2.0f, 0.5f, matrixC.get()),
            CUBLAS_STATUS_SUCCESS);
  // 2 * {58, 139, 64, 154} + 0.5 * {2, 4, 6, 8}
  EXPECT_EQ(matrixD.download(), (std::vector<float>{117, 280, 131, 312}));
  EXPECT_EQ(matrixC.download(), (std::vector<float>{2, 4, 6, 8}));
}

TEST_F(CublasLtTest, BiasEpiloguesAddTheBiasPerRowBeforeTheActivation) {
  struct Case {
    cublasLtEpilogue_t epilogue;
    std::vector<float> bias, expected;
    float tolerance;
  };
  // GELU is the tanh approximation: GELU(1) = 0.841192 (erf form: 0.841345).
  const Case cases[] = {
      {CUBLASLT_EPILOGUE_BIAS, {10, 20}, {68, 159, 74, 174}, 0.0f},
      {CUBLASLT_EPILOGUE_RELU_BIAS, {-60, -150}, {0, 0, 4, 4}, 0.0f},
      {CUBLASLT_EPILOGUE_GELU_BIAS, {-57, -140}, {0.8411920f, -0.1588080f, 7, 14}, 1e-6f},
  };
  describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F);
  DeviceBuffer<float> matrixA(kStoredA), matrixB(kStoredB);
  for (const Case &test : cases) {
    SCOPED_TRACE(std::to_string(test.epilogue));
    setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(test.epilogue));
    ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
    DeviceBuffer<float> bias(test.bias), matrixD(std::vector<float>(4));
    setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void *>(bias.get()));
    ASSERT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get()), CUBLAS_STATUS_SUCCESS);
    const std::vector<float> result = matrixD.download();
    for (size_t i = 0; i < result.size(); ++i)
      EXPECT_NEAR(result[i], test.expected[i], test.tolerance) << "element " << i;
  }
}

TEST_F(CublasLtTest, BiasGradientEpiloguesSumTheInputsOverK) {
  describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_T);
  DeviceBuffer<float> matrixA(kStoredA), matrixB(kStoredBT);
  // BGRADA: the rows of op(A) summed, {1+2+3, 4+5+6}; BGRADB: the columns of op(B),
  // {7+9+11, 8+10+12}.
  for (auto [epilogue, expected] :
       {std::pair{CUBLASLT_EPILOGUE_BGRADA, std::vector<float>{6, 15}},
        std::pair{CUBLASLT_EPILOGUE_BGRADB, std::vector<float>{27, 30}}}) {
    SCOPED_TRACE(std::to_string(epilogue));
    setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(epilogue));
    ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
    DeviceBuffer<float> gradient(std::vector<float>(2)), matrixD(std::vector<float>(4));
    setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<void *>(gradient.get()));
    ASSERT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get()), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(gradient.download(), expected);
    EXPECT_EQ(matrixD.download(), kProduct);
  }
}

TEST_F(CublasLtTest, GeluAuxStoresTheGeluInputAndDgeluUsesIt) {
  describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F);
  DeviceBuffer<float> matrixA(kStoredA), matrixB(kStoredB), bias({-57, -140});
  DeviceBuffer<float> aux(std::vector<float>(16)), matrixD(std::vector<float>(4));
  setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_GELU_AUX_BIAS));
  setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void *>(bias.get()));
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_NOT_SUPPORTED) << "no aux matrix yet";
  setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, static_cast<void *>(aux.get()));
  setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(8));
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get()), CUBLAS_STATUS_SUCCESS);
  const std::vector<float> stored = aux.download();
  // GELU inputs {58-57, 139-140, 64-57, 154-140}, columns 8 apart.
  EXPECT_EQ((std::vector<float>{stored[0], stored[1], stored[8], stored[9]}),
            (std::vector<float>{1, -1, 7, 14}));
  EXPECT_NEAR(matrixD.download()[0], 0.8411920f, 1e-6f);

  // GELU'(0) = 0.5, GELU'(100) = 1, GELU'(-100) = 0: D = {58 * 0.5, 139 * 1, 64 * 0,
  // 154 * 0.5}, and the bias gradient is D's row sums {29 + 0, 139 + 77}.
  std::vector<float> inputs(16);
  inputs[0] = 0, inputs[1] = 100, inputs[8] = -100, inputs[9] = 0;
  DeviceBuffer<float> savedInputs(inputs), gradient(std::vector<float>(2));
  setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_DGELU_BGRAD));
  setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, static_cast<void *>(savedInputs.get()));
  setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<void *>(gradient.get()));
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get()), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(matrixD.download(), (std::vector<float>{29, 139, 0, 77}));
  EXPECT_EQ(gradient.download(), (std::vector<float>{29, 216}));
}

TEST_F(CublasLtTest, HalfOutputsAccumulateInFp32AndRoundToNearestEven) {
  // fp16 bits: 1 = 0x3c00, 3 = 0x4200, 31 = 0x4fc0, 2031 = 0x67ef, 2032 = 0x67f0,
  // 2048 = 0x6800; near 2048 halves are 2 apart, the largest is 65504 = 0x7bff.
  describe(1, 4, 2, CUDA_R_16F, CUDA_R_16F);
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  DeviceBuffer<uint16_t> matrixA({0x6800, 0x3c00}); // [2048 1]
  // Columns [1 1], [1 3], [31 2031], [31 2032]: 2048 * b0 + b1 = 2049, 2051, 65519, 65520.
  DeviceBuffer<uint16_t> matrixB({0x3c00, 0x3c00, 0x3c00, 0x4200, 0x4fc0, 0x67ef, 0x4fc0, 0x67f0});
  DeviceBuffer<uint16_t> matrixD(std::vector<uint16_t>(4));
  ASSERT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get()), CUBLAS_STATUS_SUCCESS);
  // 2049: tie, to even 2048; 2051: tie, to even 2052 = 0x6802; 65519: below the midpoint
  // 65520, so 65504; 65520: tie between 65504 (odd) and 65536, so infinity 0x7c00.
  EXPECT_EQ(matrixD.download(), (std::vector<uint16_t>{0x6800, 0x6802, 0x7bff, 0x7c00}));

  // The same inputs into fp32 keep the fp32 sums.
  describe(1, 4, 2, CUDA_R_16F, CUDA_R_32F);
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  DeviceBuffer<float> sums(std::vector<float>(4));
  ASSERT_EQ(run(matrixA.get(), matrixB.get(), sums.get()), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(sums.download(), (std::vector<float>{2049, 2051, 65519, 65520}));
}

TEST_F(CublasLtTest, Bf16OutputsAddCBeforeRoundingToNearestEven) {
  // bf16 bits: 1 = 0x3f80, 3 = 0x4040, 256 = 0x4380; near 256 bf16 values are 2 apart.
  describe(1, 2, 1, CUDA_R_16BF, CUDA_R_16BF);
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  DeviceBuffer<uint16_t> matrixA({0x4380}), matrixB({0x3f80, 0x3f80}), matrixC({0x3f80, 0x4040});
  DeviceBuffer<uint16_t> matrixD(std::vector<uint16_t>(2));
  ASSERT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get(), 1.0f, 1.0f, matrixC.get()),
            CUBLAS_STATUS_SUCCESS);
  // 256 + 1 = 257: tie, to even 256; 256 + 3 = 259: tie, to even 260 = 0x4382.
  EXPECT_EQ(matrixD.download(), (std::vector<uint16_t>{0x4380, 0x4382}));
}

TEST_F(CublasLtTest, StridedBatchesUseTheirOwnMatrices) {
  describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F);
  for (auto [layout, stride] :
       {std::pair{a, 6}, std::pair{b, 6}, std::pair{c, 5}, std::pair{d, 5}}) {
    setLayout(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t(2));
    setLayout(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t(stride));
  }
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  // Batch 1: op(A) = [1 0 0; 0 1 0] picks op(B)'s first two rows, [7 8; 9 10].
  DeviceBuffer<float> matrixA({1, 4, 2, 5, 3, 6, 1, 0, 0, 1, 0, 0});
  DeviceBuffer<float> matrixB({7, 9, 11, 8, 10, 12, 7, 9, 11, 8, 10, 12});
  DeviceBuffer<float> matrixD(std::vector<float>(9, -7.0f));
  ASSERT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get()), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(matrixD.download(), (std::vector<float>{58, 139, 64, 154, -7, 7, 9, 8, 10}));
}

TEST_F(CublasLtTest, OddSizesMatchIntegerArithmetic) {
  // Small integers keep every fp32 sum exact, so the reference is integer arithmetic.
  const int64_t m = 37, n = 29, k = 53, lda = 60;
  describe(m, n, k, CUDA_R_16F, CUDA_R_32F, CUBLAS_OP_T, CUBLAS_OP_N);
  setLayout(a, CUBLASLT_MATRIX_LAYOUT_LD, lda);
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  // fp16 bits of the integers -8..8.
  const uint16_t halves[17] = {0xc800, 0xc700, 0xc600, 0xc500, 0xc400, 0xc200,
                               0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000, 0x4200,
                               0x4400, 0x4500, 0x4600, 0x4700, 0x4800};
  auto valueA = [](int64_t i, int64_t p) { return int((i * 7 + p * 3) % 17) - 8; };
  auto valueB = [](int64_t p, int64_t j) { return int((p * 5 + j * 11) % 17) - 8; };
  std::vector<uint16_t> storedA(lda * m), storedB(k * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      storedA[p + i * lda] = halves[valueA(i, p) + 8]; // stored k x m, transposed
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j)
      storedB[p + j * k] = halves[valueB(p, j) + 8];
  std::vector<float> expected(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += valueA(i, p) * valueB(p, j);
      expected[i + j * m] = float(sum);
    }
  DeviceBuffer<uint16_t> matrixA(storedA), matrixB(storedB);
  DeviceBuffer<float> matrixD(std::vector<float>(m * n));
  ASSERT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get()), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(matrixD.download(), expected);
}

} // namespace
} // namespace bertc::sim::test
