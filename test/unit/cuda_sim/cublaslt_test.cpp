// The simulated cuBLASLt against hand-computed results: a 2x3 by 3x2 product in every
// transpose combination, padded leading dimensions, alpha and beta, the bias, ReLU, GELU
// and bias-gradient epilogues, fp16 and bf16 rounding, strided batches; the statuses NVIDIA
// documents for what a GPU refuses (types, bf16 before sm_80, shapes, alignment, workspace);
// and the device fault an operand outside device memory raises.
#include "bertc/cuda_sim/faults.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace bertc::sim::test {
namespace {

/// A device copy of host values, with `extra` more elements allocated after them.
template <typename T> class DeviceBuffer {
public:
  explicit DeviceBuffer(const std::vector<T> &values, size_t extra = 0) : count(values.size()) {
    EXPECT_EQ(cudaMalloc(&data, (count + extra) * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data, values.data(), count * sizeof(T), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  T *get() const { return static_cast<T *>(data); }
  std::vector<T> download() const {
    std::vector<T> values(count);
    EXPECT_EQ(cudaMemcpy(values.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return values;
  }

private:
  void *data = nullptr;
  size_t count;
};

/// Sets BERTC_SIM_ARCH (the simulated GPU) for the scope, then restores it.
class ScopedArch {
public:
  explicit ScopedArch(const char *arch) {
    if (const char *previous = std::getenv("BERTC_SIM_ARCH"))
      saved = previous, hadValue = true;
    setenv("BERTC_SIM_ARCH", arch, 1);
  }
  ~ScopedArch() {
    if (hadValue)
      setenv("BERTC_SIM_ARCH", saved.c_str(), 1);
    else
      unsetenv("BERTC_SIM_ARCH");
  }

private:
  std::string saved;
  bool hadValue = false;
};

// The 2x3 by 3x2 product every test starts from:
//   op(A) = [1 2 3]   op(B) = [ 7  8]   D = [ 1*7+2*9+3*11   1*8+2*10+3*12 ] = [ 58  64]
//           [4 5 6]           [ 9 10]       [ 4*7+5*9+6*11   4*8+5*10+6*12 ]   [139 154]
//                             [11 12]
// stored column-major as written (N) or as the transpose (T).
const std::vector<float> kStoredA = {1, 4, 2, 5, 3, 6}, kStoredAT = {1, 2, 3, 4, 5, 6};
const std::vector<float> kStoredB = {7, 9, 11, 8, 10, 12}, kStoredBT = {7, 8, 9, 10, 11, 12};
const std::vector<float> kProduct = {58, 139, 64, 154};

constexpr size_t kMaxWorkspaceBytes = 1 << 20;

/// One matmul's descriptors: describe() makes them for D (m x n) = op(A) op(B) with
/// unpadded layouts and 16-byte alignment; a test then changes what it is about.
class CublasLtTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_EQ(cublasLtCreate(&handle), CUBLAS_STATUS_SUCCESS); }
  void TearDown() override {
    releaseDescriptors();
    EXPECT_EQ(cublasLtDestroy(handle), CUBLAS_STATUS_SUCCESS);
  }

  void releaseDescriptors() {
    for (cublasLtMatrixLayout_t layout : {a, b, c, d})
      cublasLtMatrixLayoutDestroy(layout);
    cublasLtMatmulDescDestroy(desc);
    cublasLtMatmulPreferenceDestroy(preference);
    a = b = c = d = nullptr;
    desc = nullptr;
    preference = nullptr;
  }

  void describe(uint64_t m, uint64_t n, uint64_t k, cudaDataType_t input, cudaDataType_t output,
                cublasOperation_t transA = CUBLAS_OP_N, cublasOperation_t transB = CUBLAS_OP_N) {
    releaseDescriptors();
    ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
              CUBLAS_STATUS_SUCCESS);
    setDesc(CUBLASLT_MATMUL_DESC_TRANSA, int32_t(transA));
    setDesc(CUBLASLT_MATMUL_DESC_TRANSB, int32_t(transB));
    const uint64_t rowsA = transA == CUBLAS_OP_N ? m : k, rowsB = transB == CUBLAS_OP_N ? k : n;
    ASSERT_EQ(cublasLtMatrixLayoutCreate(&a, input, rowsA, m * k / rowsA, int64_t(rowsA)),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatrixLayoutCreate(&b, input, rowsB, k * n / rowsB, int64_t(rowsB)),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatrixLayoutCreate(&c, output, m, n, int64_t(m)), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatrixLayoutCreate(&d, output, m, n, int64_t(m)), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatmulPreferenceCreate(&preference), CUBLAS_STATUS_SUCCESS);
    setPreference(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(kMaxWorkspaceBytes));
    for (auto attribute :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      setPreference(attribute, uint32_t(16));
  }

  template <typename T> void setDesc(cublasLtMatmulDescAttributes_t attribute, T value) {
    ASSERT_EQ(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof value),
              CUBLAS_STATUS_SUCCESS);
  }
  template <typename T>
  void setPreference(cublasLtMatmulPreferenceAttributes_t attribute, T value) {
    ASSERT_EQ(cublasLtMatmulPreferenceSetAttribute(preference, attribute, &value, sizeof value),
              CUBLAS_STATUS_SUCCESS);
  }
  template <typename T>
  void setLayout(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute,
                 T value) {
    ASSERT_EQ(cublasLtMatrixLayoutSetAttribute(layout, attribute, &value, sizeof value),
              CUBLAS_STATUS_SUCCESS);
  }

  /// The heuristic's status; its algorithm lands in `chosen`.
  cublasStatus_t chooseAlgorithm() {
    int count = -1;
    const cublasStatus_t status =
        cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, c, d, preference, 1, &chosen, &count);
    EXPECT_EQ(count, status == CUBLAS_STATUS_SUCCESS ? 1 : 0);
    return status;
  }

  /// D = alpha op(A) op(B) + beta C with the chosen algorithm and the whole workspace;
  /// C is D unless given.
  cublasStatus_t run(const void *matrixA, const void *matrixB, void *matrixD, float alpha = 1.0f,
                     float beta = 0.0f, const void *matrixC = nullptr) {
    return cublasLtMatmul(handle, desc, &alpha, matrixA, a, matrixB, b, &beta,
                          matrixC ? matrixC : matrixD, c, matrixD, d, &chosen.algo, workspace.get(),
                          kMaxWorkspaceBytes, nullptr);
  }

  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulHeuristicResult_t chosen{};
  DeviceBuffer<char> workspace{std::vector<char>(kMaxWorkspaceBytes)};
};

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

TEST_F(CublasLtTest, UnsupportedTypeCombinationsAreNotSupported) {
  describe(2, 2, 3, CUDA_R_16F, CUDA_R_16F);
  setLayout(b, CUBLASLT_MATRIX_LAYOUT_TYPE, uint32_t(CUDA_R_16BF));
  EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_NOT_SUPPORTED) << "fp16 A with bf16 B";
  float alpha = 1, beta = 0;
  DeviceBuffer<uint16_t> matrixA(std::vector<uint16_t>(6)), matrixB(std::vector<uint16_t>(6));
  DeviceBuffer<uint16_t> matrixD(std::vector<uint16_t>(4));
  EXPECT_EQ(cublasLtMatmul(handle, desc, &alpha, matrixA.get(), a, matrixB.get(), b, &beta,
                           matrixD.get(), c, matrixD.get(), d, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_NOT_SUPPORTED);

  setLayout(a, CUBLASLT_MATRIX_LAYOUT_TYPE, uint32_t(CUDA_R_32F));
  setLayout(b, CUBLASLT_MATRIX_LAYOUT_TYPE, uint32_t(CUDA_R_32F));
  EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_NOT_SUPPORTED) << "fp32 inputs, fp16 output";
  setLayout(c, CUBLASLT_MATRIX_LAYOUT_TYPE, uint32_t(CUDA_R_32F));
  setLayout(d, CUBLASLT_MATRIX_LAYOUT_TYPE, uint32_t(CUDA_R_32F));
  EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS) << "fp32 throughout";
}

TEST_F(CublasLtTest, Bf16AndTf32NeedSm80) {
  describe(2, 2, 3, CUDA_R_16BF, CUDA_R_16BF);
  {
    ScopedArch turing("sm_75");
    EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_NOT_SUPPORTED);
  }
  {
    ScopedArch ampere("sm_80");
    EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  }
  for (cublasLtMatrixLayout_t layout : {a, b, c, d})
    setLayout(layout, CUBLASLT_MATRIX_LAYOUT_TYPE, uint32_t(CUDA_R_32F));
  setDesc(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, int32_t(CUBLAS_COMPUTE_32F_FAST_TF32));
  {
    ScopedArch turing("sm_75");
    EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_NOT_SUPPORTED);
  }
  {
    ScopedArch ampere("sm_80");
    EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  }
}

TEST_F(CublasLtTest, InconsistentShapesAreInvalidWhenUsed) {
  describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F);
  // As in libcublasLt, a layout is only checked when it is used.
  cublasLtMatrixLayout_t narrow = nullptr;
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&narrow, CUDA_R_32F, 2, 3, 1), CUBLAS_STATUS_SUCCESS);
  std::swap(narrow, a);
  EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_INVALID_VALUE) << "ld 1 < 2 rows";
  std::swap(narrow, a);
  cublasLtMatrixLayoutDestroy(narrow);

  setLayout(b, CUBLASLT_MATRIX_LAYOUT_ROWS, uint64_t(4));
  setLayout(b, CUBLASLT_MATRIX_LAYOUT_LD, int64_t(4));
  EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_INVALID_VALUE) << "op(A) 2x3, op(B) 4x2";
  setLayout(b, CUBLASLT_MATRIX_LAYOUT_ROWS, uint64_t(3));
  EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  setDesc(CUBLASLT_MATMUL_DESC_TRANSA, int32_t(CUBLAS_OP_T));
  EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_INVALID_VALUE) << "op(A) 3x2";
  setDesc(CUBLASLT_MATMUL_DESC_TRANSA, int32_t(CUBLAS_OP_N));
  setLayout(d, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t(2));
  EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_INVALID_VALUE) << "D batched, A, B, C not";
}

TEST_F(CublasLtTest, AlignmentBelowTheElementSizeIsNotSupported) {
  describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32_t(1));
  EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_NOT_SUPPORTED);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32_t(4));
  EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
}

TEST_F(CublasLtTest, PointersMustHaveTheAlignmentTheAlgorithmWasChosenFor) {
  describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F);
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS); // for 16-byte aligned A
  std::vector<float> shifted = {0};
  shifted.insert(shifted.end(), kStoredA.begin(), kStoredA.end());
  DeviceBuffer<float> matrixA(shifted), matrixB(kStoredB), matrixD(std::vector<float>(4));
  const float *fourByteAligned = matrixA.get() + 1;
  EXPECT_EQ(run(fourByteAligned, matrixB.get(), matrixD.get()), CUBLAS_STATUS_INVALID_VALUE);

  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32_t(4));
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(run(fourByteAligned, matrixB.get(), matrixD.get()), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(matrixD.download(), kProduct);
}

TEST_F(CublasLtTest, WorkspaceSmallerThanTheAlgorithmsIsInvalid) {
  describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F);
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  ASSERT_GT(chosen.workspaceSize, 0u);
  ASSERT_LE(chosen.workspaceSize, kMaxWorkspaceBytes);
  DeviceBuffer<float> matrixA(kStoredA), matrixB(kStoredB), matrixD(std::vector<float>(4));
  const float alpha = 1, beta = 0;
  EXPECT_EQ(cublasLtMatmul(handle, desc, &alpha, matrixA.get(), a, matrixB.get(), b, &beta,
                           matrixD.get(), c, matrixD.get(), d, &chosen.algo, workspace.get(),
                           chosen.workspaceSize - 1, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasLtMatmul(handle, desc, &alpha, matrixA.get(), a, matrixB.get(), b, &beta,
                           matrixD.get(), c, matrixD.get(), d, &chosen.algo, workspace.get(),
                           chosen.workspaceSize, nullptr),
            CUBLAS_STATUS_SUCCESS);
}

TEST_F(CublasLtTest, MissingHandleOrBiasPointerIsRefused) {
  describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F);
  cublasLtMatmulHeuristicResult_t result;
  int count = 0;
  EXPECT_EQ(
      cublasLtMatmulAlgoGetHeuristic(nullptr, desc, a, b, c, d, preference, 1, &result, &count),
      CUBLAS_STATUS_NOT_INITIALIZED);
  setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_BIAS));
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS) << "the bias pointer may come later";
  DeviceBuffer<float> matrixA(kStoredA), matrixB(kStoredB), matrixD(std::vector<float>(4));
  EXPECT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get()), CUBLAS_STATUS_INVALID_VALUE);
}

TEST_F(CublasLtTest, OperandsOutsideDeviceMemoryFaultTheDevice) {
  describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F);
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  alignas(16) float hostA[6] = {1, 4, 2, 5, 3, 6};
  DeviceBuffer<float> matrixB(kStoredB), matrixD(std::vector<float>(4));
  clearDeviceFaults();
  EXPECT_EQ(run(hostA, matrixB.get(), matrixD.get()), CUBLAS_STATUS_EXECUTION_FAILED);
  ASSERT_EQ(faultReports().size(), 1u);
  EXPECT_EQ(faultReports()[0].rfind("cublasLtMatmul: A range [0x", 0), 0u) << faultReports()[0];
  EXPECT_NE(faultReports()[0].find(") is not device memory"), std::string::npos);
  clearDeviceFaults();

  // With ld 128, D's second column starts past the 4 floats (one 256-byte granule, as
  // cudaMalloc rounds) allocated.
  DeviceBuffer<float> matrixA(kStoredA);
  setLayout(c, CUBLASLT_MATRIX_LAYOUT_LD, int64_t(128));
  setLayout(d, CUBLASLT_MATRIX_LAYOUT_LD, int64_t(128));
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get()), CUBLAS_STATUS_EXECUTION_FAILED);
  ASSERT_EQ(faultReports().size(), 1u);
  EXPECT_EQ(faultReports()[0].rfind("cublasLtMatmul: D range [0x", 0), 0u) << faultReports()[0];
  clearDeviceFaults();
}

TEST(CublasLtAttributes, SizesAreCheckedAndDefaultsAreNvidias) {
  cublasLtMatmulPreference_t preference = nullptr;
  ASSERT_EQ(cublasLtMatmulPreferenceCreate(&preference), CUBLAS_STATUS_SUCCESS);
  uint32_t alignment = 0;
  size_t written = 0;
  EXPECT_EQ(cublasLtMatmulPreferenceGetAttribute(preference,
                                                 CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                 &alignment, sizeof alignment, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(alignment, 256u);
  EXPECT_EQ(written, sizeof alignment);
  const uint32_t workspaceBytes = 1024; // the attribute is a uint64_t
  EXPECT_EQ(cublasLtMatmulPreferenceSetAttribute(preference,
                                                 CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &workspaceBytes, sizeof workspaceBytes),
            CUBLAS_STATUS_INVALID_VALUE);
  cublasLtMatmulPreferenceDestroy(preference);

  cublasLtMatmulDesc_t desc = nullptr;
  ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  int32_t biasType = 0;
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &biasType,
                                           sizeof biasType, nullptr),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(biasType, -1);
  EXPECT_EQ(
      cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, nullptr, 0, &written),
      CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(written, sizeof(void *));
  cublasLtMatmulDescDestroy(desc);

  cublasLtMatrixLayout_t layout = nullptr;
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&layout, CUDA_R_16F, 4, 3, 4), CUBLAS_STATUS_SUCCESS);
  int32_t batchCount = 0;
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                             &batchCount, sizeof batchCount, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(batchCount, 1);
  const int64_t wideBatchCount = 2; // the attribute is an int32_t
  EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                             &wideBatchCount, sizeof wideBatchCount),
            CUBLAS_STATUS_INVALID_VALUE);
  cublasLtMatrixLayoutDestroy(layout);
}

TEST(CublasLtStatus, NamesAndDescriptionsAreTheLibrarys) {
  EXPECT_STREQ(cublasLtGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_STREQ(cublasLtGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED),
               "the requested functionality is not supported");
  EXPECT_STREQ(cublasLtGetStatusString(CUBLAS_STATUS_INVALID_VALUE),
               "an unsupported value or parameter was passed to the function");
  EXPECT_STREQ(cublasLtGetStatusName(cublasStatus_t(2)), "unrecognized status");
}

} // namespace
} // namespace bertc::sim::test
