// The simulated cuBLASLt's pointer-array batches (CUBLASLT_BATCH_MODE_POINTER_ARRAY): each
// batch multiplies the matrices its arrays' entries name, the entries are read when the
// matmul runs, and what the simulation does not run is refused.
#include "cublaslt_fixture.h"

#include "bertc/cuda_sim/faults.h"

namespace bertc::sim::test {
namespace {

class CublasLtPointerArrayTest : public CublasLtTest {
protected:
  /// The fixture's 2x3 by 3x2 product, `batches` of it, every layout in pointer-array mode.
  void describeBatches(int32_t batches) {
    describe(2, 2, 3, CUDA_R_32F, CUDA_R_32F);
    for (cublasLtMatrixLayout_t layout : {a, b, c, d}) {
      setLayout(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, batches);
      setLayout(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE,
                uint32_t(CUBLASLT_BATCH_MODE_POINTER_ARRAY));
    }
  }
};

TEST_F(CublasLtPointerArrayTest, EachBatchMultipliesTheMatricesItsEntriesName) {
  describeBatches(2);
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  // One buffer each, the batches' matrices in the opposite order from the arrays' (and 16
  // bytes apart, the alignment chosen for): batch 0 is the fixture's product, batch 1
  // picks op(B)'s first two rows, [7 8; 9 10].
  DeviceBuffer<float> matrices({1, 0, 0, 1, 0, 0, -1, -1, 1, 4, 2, 5, 3, 6});
  DeviceBuffer<float> matrixB(kStoredB), outputs(std::vector<float>(8, -7.0f));
  float *const base = matrices.get(), *const out = outputs.get();
  DeviceBuffer<const void *> arrayA({base + 8, base}), arrayB({matrixB.get(), matrixB.get()});
  DeviceBuffer<void *> arrayD({out + 4, out});
  ASSERT_EQ(run(arrayA.get(), arrayB.get(), arrayD.get()), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(outputs.download(), (std::vector<float>{7, 9, 8, 10, 58, 139, 64, 154}));

  // With beta = 1, C's array names what each batch adds.
  DeviceBuffer<float> addends({1, 2, 3, 4, 10, 20, 30, 40});
  DeviceBuffer<const void *> arrayC({addends.get() + 4, addends.get()});
  ASSERT_EQ(run(arrayA.get(), arrayB.get(), arrayD.get(), 1.0f, 1.0f, arrayC.get()),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(outputs.download(), (std::vector<float>{8, 11, 11, 14, 68, 159, 94, 194}));
}

TEST_F(CublasLtPointerArrayTest, ModesMustAgreeAndEpiloguesAreNotSupported) {
  describeBatches(2);
  setLayout(b, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, uint32_t(CUBLASLT_BATCH_MODE_STRIDED));
  EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_NOT_SUPPORTED);
  describeBatches(2);
  setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_RELU));
  EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_NOT_SUPPORTED);
  describeBatches(2);
  setLayout(d, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, uint32_t(2));
  EXPECT_EQ(chooseAlgorithm(), CUBLAS_STATUS_INVALID_VALUE);
}

TEST_F(CublasLtPointerArrayTest, ArraysAreCheckedAtTheCallAndEntriesWhenTheMatmulRuns) {
  describeBatches(2);
  ASSERT_EQ(chooseAlgorithm(), CUBLAS_STATUS_SUCCESS);
  DeviceBuffer<float> matrixA(kStoredA), matrixB(kStoredB), matrixD(std::vector<float>(4));
  DeviceBuffer<const void *> arrayA({matrixA.get(), matrixA.get()});
  DeviceBuffer<const void *> arrayB({matrixB.get(), matrixB.get()});
  DeviceBuffer<void *> arrayD({matrixD.get(), matrixD.get()});
  clearDeviceFaults();

  // An array in host memory: the call faults the device.
  const void *hostArray[2] = {matrixA.get(), matrixA.get()};
  EXPECT_EQ(run(hostArray, arrayB.get(), arrayD.get()), CUBLAS_STATUS_EXECUTION_FAILED);
  ASSERT_EQ(faultReports().size(), 1u);
  EXPECT_EQ(faultReports()[0].rfind("cublasLtMatmul: A pointer array range [0x", 0), 0u)
      << faultReports()[0];
  clearDeviceFaults();

  // A host matrix in batch 1: batch 0 is computed, then the device faults.
  alignas(16) float hostB[6] = {7, 9, 11, 8, 10, 12};
  DeviceBuffer<const void *> mixedB({matrixB.get(), hostB});
  DeviceBuffer<float> outputs(std::vector<float>(8, -7.0f));
  DeviceBuffer<void *> twoOutputs({outputs.get(), outputs.get() + 4});
  EXPECT_EQ(run(arrayA.get(), mixedB.get(), twoOutputs.get()), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(faultReports().size(), 1u);
  EXPECT_EQ(faultReports()[0].rfind("cublasLtMatmul: B range [0x", 0), 0u) << faultReports()[0];
  clearDeviceFaults();
  EXPECT_EQ(outputs.download(), (std::vector<float>{58, 139, 64, 154, -7, -7, -7, -7}));

  // An entry less aligned than the algorithm was chosen for (16 bytes).
  DeviceBuffer<void *> misaligned({matrixD.get(), reinterpret_cast<char *>(matrixD.get()) + 4});
  EXPECT_EQ(run(arrayA.get(), arrayB.get(), misaligned.get()), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(faultReports().size(), 1u);
  EXPECT_NE(faultReports()[0].find("D of batch 1 at"), std::string::npos) << faultReports()[0];
  EXPECT_NE(faultReports()[0].find("is not aligned to 16 bytes"), std::string::npos);
  clearDeviceFaults();
}

} // namespace
} // namespace bertc::sim::test
