// The simulated cuBLASLt's CUBLAS_COMPUTE_32F_FAST_TF32 against hand-computed values: the
// multiplies see A and B rounded to TF32 (10 explicit mantissa bits, to nearest, ties to
// even) and the products are summed in fp32, while CUBLAS_COMPUTE_32F keeps every bit.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace bertc::sim::test {
namespace {

/// D (m x 1) = A (m x k) B (k x 1), all fp32 and column-major, with `compute`, on the
/// simulated device (sm_80 unless BERTC_SIM_ARCH says otherwise).
std::vector<float> matmul(const std::vector<float> &a, const std::vector<float> &b,
                          cublasComputeType_t compute) {
  const uint64_t k = b.size(), m = a.size() / k;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layoutA = nullptr, layoutB = nullptr, layoutD = nullptr;
  void *deviceA = nullptr, *deviceB = nullptr, *deviceD = nullptr;
  EXPECT_EQ(cublasLtCreate(&handle), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutCreate(&layoutA, CUDA_R_32F, m, k, int64_t(m)),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutCreate(&layoutB, CUDA_R_32F, k, 1, int64_t(k)),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutCreate(&layoutD, CUDA_R_32F, m, 1, int64_t(m)),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cudaMalloc(&deviceA, a.size() * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&deviceB, b.size() * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&deviceD, m * sizeof(float)), cudaSuccess);
  cudaMemcpy(deviceA, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(deviceB, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice);
  const float alpha = 1.0f, beta = 0.0f;
  // No algorithm: the one the heuristic would pick for these pointers, without workspace.
  EXPECT_EQ(cublasLtMatmul(handle, desc, &alpha, deviceA, layoutA, deviceB, layoutB, &beta, deviceD,
                           layoutD, deviceD, layoutD, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_SUCCESS);
  std::vector<float> d(m);
  cudaMemcpy(d.data(), deviceD, m * sizeof(float), cudaMemcpyDeviceToHost);
  for (void *buffer : {deviceA, deviceB, deviceD})
    cudaFree(buffer);
  for (cublasLtMatrixLayout_t layout : {layoutA, layoutB, layoutD})
    cublasLtMatrixLayoutDestroy(layout);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(handle);
  return d;
}

// Times 1, each value of A comes back as the multiply saw it. TF32's unit in the last
// place at 1 is 2^-10; the 13 bits below it are rounded away.
TEST(CublasLtTf32, InputsAreRoundedToTenMantissaBitsTiesToEven) {
  const float ulp = std::ldexp(1.0f, -10), half = ulp / 2, fp32Ulp = std::ldexp(1.0f, -23);
  const float largest = std::numeric_limits<float>::max();
  const std::vector<float> a = {
      1 + half,           // a tie with an even 1: 1
      1 + 3 * half,       // a tie between 1 + ulp (odd) and 1 + 2 ulp: 1 + 2 ulp
      1 + half + fp32Ulp, // just above the tie: 1 + ulp
      1 + half - fp32Ulp, // just below: 1
      -(1 + 3 * half),    // the sign is kept: -(1 + 2 ulp)
      1 + ulp,            // already TF32: itself
      largest,            // past TF32's largest, (2 - 2^-10) 2^127: infinity
      // Subnormals: TF32's smallest is 2^-126 2^-10 = 2^-136.
      std::ldexp(1.0f, -136) + std::ldexp(1.0f, -149), // just above it: 2^-136
      std::ldexp(1.0f, -137),                          // half of it, a tie with an even 0: 0
  };
  const std::vector<float> tf32 = {
      1, 1 + 2 * ulp, 1 + ulp, 1, -(1 + 2 * ulp), 1 + ulp, INFINITY, std::ldexp(1.0f, -136), 0};
  EXPECT_EQ(matmul(a, {1.0f}, CUBLAS_COMPUTE_32F_FAST_TF32), tf32);
  EXPECT_EQ(matmul(a, {1.0f}, CUBLAS_COMPUTE_32F), a);
}

TEST(CublasLtTf32, InfinityAndNaNPassUnchanged) {
  const std::vector<float> d =
      matmul({INFINITY, -INFINITY, NAN}, {1.0f}, CUBLAS_COMPUTE_32F_FAST_TF32);
  EXPECT_EQ(d[0], INFINITY);
  EXPECT_EQ(d[1], -INFINITY);
  EXPECT_TRUE(std::isnan(d[2]));
}

// Both operands rounded, the products summed in fp32: with x = 1 + 3 * 2^-11, which
// rounds to 1 + 2^-9,
//   TF32: x x + x x = 2 (1 + 2^-9)^2 = 2 + 2^-7 + 2^-17 (exact in fp32: 19 bits);
//   fp32: 2 x^2 = 2 + 3 * 2^-9 + 9 * 2^-21 (exact: 23 bits).
TEST(CublasLtTf32, ProductsOfRoundedInputsAreSummedInFp32) {
  const float x = 1 + 3 * std::ldexp(1.0f, -11);
  EXPECT_EQ(matmul({x, x}, {x, x}, CUBLAS_COMPUTE_32F_FAST_TF32),
            std::vector<float>{2 + std::ldexp(1.0f, -7) + std::ldexp(1.0f, -17)});
  EXPECT_EQ(matmul({x, x}, {x, x}, CUBLAS_COMPUTE_32F),
            std::vector<float>{2 + 3 * std::ldexp(1.0f, -9) + 9 * std::ldexp(1.0f, -21)});
}

} // namespace
} // namespace bertc::sim::test
