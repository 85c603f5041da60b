// Shared pieces of the CUDA kernel tests: the fixture that skips when the machine has no
// CUDA device (and, on the simulated device, fails a test whose kernels faulted), device
// arrays, random inputs in a storage type, and the tolerance check
// |actual - expected| <= atol + rtol * |expected| per element.
#pragma once

#include "bertc/abi/kernel_workspace.h"
#include "bertc/runtime/cuda_check.h"
#include "bertc/runtime/half_types.h"

#include <gtest/gtest.h>

#if defined(BERTC_CUDA_SIM)
#include "../cuda_sim/scoped_arch.h"
#include "bertc/cuda_sim/faults.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace bertc::cuda::test {

inline bool hasCudaDevice() {
  int count = 0;
  const bool found = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError(); // clear the "no device" error of a machine without a GPU
  return found;
}

/// Compute capability major version of the current device.
inline int deviceMajorVersion() {
  int device = 0, major = 0;
  BERTC_CUDA_CHECK(cudaGetDevice(&device));
  BERTC_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major;
}

/// Tests that run kernels: skipped, not failed, on a machine without a CUDA device. On the
/// simulated device, whatever its checkers reported fails the test (compute-sanitizer's
/// role on a GPU).
class CudaTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!hasCudaDevice())
      GTEST_SKIP() << "no CUDA device";
  }
#if defined(BERTC_CUDA_SIM)
  void TearDown() override {
    for (const std::string &report : sim::faultReports())
      ADD_FAILURE() << "simulated device: " << report;
    sim::clearDeviceFaults();
  }
#endif
};

#if defined(BERTC_CUDA_SIM)
using sim::test::ScopedArch;
using sim::test::ScopedVariable;
#endif

/// The same, once per storage type.
template <typename T> class CudaTypedTest : public CudaTest {};
using StorageTypes = ::testing::Types<float, bf16, fp16>;
struct StorageTypeNames {
  template <typename T> static std::string GetName(int) {
    if (std::is_same_v<T, bf16>)
      return "bf16";
    if (std::is_same_v<T, fp16>)
      return "fp16";
    return "fp32";
  }
};

/// An owned device allocation of count values of T.
template <typename T> class DeviceArray {
public:
  explicit DeviceArray(size_t count) : count(count) {
    BERTC_CUDA_CHECK(
        cudaMalloc(reinterpret_cast<void **>(&data), std::max<size_t>(count, 1) * sizeof(T)));
    BERTC_CUDA_CHECK(cudaMemset(data, 0, std::max<size_t>(count, 1) * sizeof(T)));
  }
  explicit DeviceArray(const std::vector<T> &host) : DeviceArray(host.size()) {
    BERTC_CUDA_CHECK(cudaMemcpy(data, host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~DeviceArray() { cudaFree(data); }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;

  T *get() const { return data; }
  /// Waits for the queued work, then copies the values back.
  std::vector<T> download() const {
    BERTC_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> host(count);
    BERTC_CUDA_CHECK(cudaMemcpy(host.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

private:
  T *data = nullptr;
  size_t count;
};

/// count values uniform in [low, high), rounded to T; the same seed gives the same values.
template <typename T>
std::vector<T> randomValues(size_t count, uint32_t seed, float low = -1.0f, float high = 1.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<T> values(count);
  for (T &value : values)
    value = fromFloat<T>(uniform(generator));
  return values;
}

/// The attention tests' key mask [batch, seq]: sequence b has all keys visible (b % 3 == 0),
/// the last third masked (1) or all masked (2).
inline std::vector<int32_t> attentionKeyMask(int64_t batch, int64_t seq) {
  std::vector<int32_t> mask(batch * seq, 1);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < seq; ++j)
      if ((b % 3 == 1 && j >= seq - seq / 3) || b % 3 == 2)
        mask[b * seq + j] = 0;
  return mask;
}

/// Tolerances for results stored in T after fp32 math that differs from the CPU's only in
/// the order of operations: a few fp32 ulps, or one rounding step of the 16-bit types.
template <typename T> struct Tolerance;
template <> struct Tolerance<float> {
  static constexpr double atol = 1e-5, rtol = 1e-5;
};
template <> struct Tolerance<bf16> {
  static constexpr double atol = 1e-2, rtol = 1.6e-2; // bf16 keeps 8 significant bits
};
template <> struct Tolerance<fp16> {
  static constexpr double atol = 2e-3, rtol = 2e-3; // fp16 keeps 11 significant bits
};

/// Expects every actual[i] within atol + rtol * |expected[i]|; reports the first misses.
template <typename A, typename E>
void expectClose(const std::vector<A> &actual, const std::vector<E> &expected, double atol,
                 double rtol, const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int misses = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = toFloat(actual[i]), e = toFloat(expected[i]);
    if (std::abs(a - e) <= atol + rtol * std::abs(e))
      continue;
    if (++misses <= 5)
      ADD_FAILURE() << what << "[" << i << "]: " << a << " (CUDA) vs " << e << " (CPU)";
  }
  EXPECT_EQ(misses, 0) << what << ": " << misses << " of " << actual.size() << " outside " << atol
                       << " + " << rtol << " * |expected|";
}

/// Expects the two arrays to hold the same bits.
template <typename T>
void expectBitIdentical(const std::vector<T> &actual, const std::vector<T> &expected,
                        const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int misses = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::memcmp(&actual[i], &expected[i], sizeof(T)) == 0)
      continue;
    if (++misses <= 5)
      ADD_FAILURE() << what << "[" << i << "]: " << toFloat(actual[i]) << " (CUDA) vs "
                    << toFloat(expected[i]) << " (CPU)";
  }
  EXPECT_EQ(misses, 0) << what << ": " << misses << " of " << actual.size() << " differ";
}

/// Expects every one of the kColumnSumTickets column-sum tickets at zero, as each column sum
/// must leave them (abi/kernel_workspace.h).
inline void expectTicketsAtZero(const DeviceArray<unsigned> &tickets, const std::string &what) {
  const std::vector<unsigned> values = tickets.download();
  EXPECT_EQ(std::count(values.begin(), values.end(), 0u), kColumnSumTickets)
      << "tickets left after " << what;
}

} // namespace bertc::cuda::test
