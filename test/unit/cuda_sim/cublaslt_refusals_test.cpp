// The simulated cuBLASLt refuses what a GPU refuses, with the statuses NVIDIA documents
// (types, bf16 and TF32 before sm_80, shapes, alignment, workspace, missing pointers), and
// faults the device for an operand outside device memory; its attributes' sizes and
// defaults and its status names are the library's.
#include "cublaslt_fixture.h"

#include "bertc/cuda_sim/faults.h"

namespace bertc::sim::test {
namespace {

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

// cuBLASLt's heuristic infers the bias's alignment from the pointer the descriptor holds
// then (none: any alignment), so a bias less aligned than that one at the call is refused.
TEST_F(CublasLtTest, BiasMustHaveTheAlignmentOfThePointerTheAlgorithmWasChosenWith) {
  describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F);
  setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_BIAS));
  DeviceBuffer<float> matrixA(kStoredA), matrixB(kStoredB), matrixD(std::vector<float>(4));
  DeviceBuffer<float> biases(std::vector<float>{0, 10, 20}); // 256-byte aligned, then +4
  const float *shifted = biases.get() + 1;
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS); // with no bias pointer yet
  setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, shifted);
  EXPECT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get()), CUBLAS_STATUS_INVALID_VALUE);

  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS); // with the shifted bias
  ASSERT_EQ(run(matrixA.get(), matrixB.get(), matrixD.get()), CUBLAS_STATUS_SUCCESS);
  std::vector<float> withBias = kProduct;
  for (size_t i = 0; i < withBias.size(); ++i)
    withBias[i] += i % 2 == 0 ? 10.0f : 20.0f; // bias[row] of column-major [2, 2]
  EXPECT_EQ(matrixD.download(), withBias);
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
