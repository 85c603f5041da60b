// The simulated cuBLASLt's tests' shared parts: device buffers, a scoped simulated GPU
// (scoped_arch.h), the 2x3 by 3x2 product every test starts from, and a fixture holding one
// matmul's descriptors.
#pragma once

#include "scoped_arch.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace bertc::sim::test {

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

// The 2x3 by 3x2 product every test starts from:
//   op(A) = [1 2 3]   op(B) = [ 7  8]   D = [ 1*7+2*9+3*11   1*8+2*10+3*12 ] = [ 58  64]
//           [4 5 6]           [ 9 10]       [ 4*7+5*9+6*11   4*8+5*10+6*12 ]   [139 154]
//                             [11 12]
// stored column-major as written (N) or as the transpose (T).
inline const std::vector<float> kStoredA = {1, 4, 2, 5, 3, 6}, kStoredAT = {1, 2, 3, 4, 5, 6};
inline const std::vector<float> kStoredB = {7, 9, 11, 8, 10, 12}, kStoredBT = {7, 8, 9, 10, 11, 12};
inline const std::vector<float> kProduct = {58, 139, 64, 154};

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

} // namespace bertc::sim::test
