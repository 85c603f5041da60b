// The simulated device's checkers against deliberately broken kernels: each mistake a GPU
// run would show only under compute-sanitizer (or as wrong numbers, now and then) is
// reported, naming the kernel, block, thread and address; the correct version of each
// kernel runs clean and computes the expected values.
#include "bertc/cuda_sim/faults.h"
#include "bertc/cuda_sim/launch.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

namespace bertc::sim::test {
namespace {

constexpr int kThreads = 64;

/// Launches `kernel` as BERTC_LAUNCH does on the simulated device.
template <typename Kernel, typename... Args>
void launchOn(const char *name, dim3 grid, dim3 block, Kernel kernel, Args... args) {
  launchKernel({name, grid, block, 0, nullptr}, kernel, args...);
}

/// out[t] = in[t - 1] (out[0] = in[0]) through shared memory; `barrier` false leaves out
/// the __syncthreads between the writes and the reads.
__global__ void shiftThroughShared(const float *in, float *out, bool barrier) {
  __shared__ float staged[kThreads];
  staged[threadIdx.x] = in[threadIdx.x];
  if (barrier)
    __syncthreads();
  out[threadIdx.x] = staged[threadIdx.x > 0 ? threadIdx.x - 1 : 0];
}

/// Each thread reads the value the next thread stages, with no barrier between.
__global__ void readAhead(const float *in, float *out) {
  __shared__ float staged[kThreads];
  staged[threadIdx.x] = in[threadIdx.x];
  out[threadIdx.x] = staged[(threadIdx.x + 1) % kThreads];
}

/// out[i] = 2 in[i] for i < n, or (the off-by-one) for i <= n.
__global__ void scale(const float *in, float *out, int n, bool offByOne) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n || (offByOne && i == n))
    out[i] = 2.0f * in[i];
}

/// Reads a shared value that only some threads wrote.
__global__ void readUnwritten(float *out) {
  __shared__ float values[kThreads];
  if (threadIdx.x < kThreads / 2)
    values[threadIdx.x] = float(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = values[kThreads - 1 - threadIdx.x];
}

/// Every thread reads the total thread 0 shared, then the last thread replaces it; `barrier`
/// false leaves out the __syncthreads between the reads and the write. The total's slot is
/// an argument: an access the compiler can prove in bounds goes unchecked (device_code.h).
__global__ void overwriteWhileRead(const float *in, float *out, int slot, bool barrier) {
  __shared__ float totals[kThreads];
  if (threadIdx.x == 0)
    totals[slot] = in[0];
  __syncthreads();
  out[threadIdx.x] = totals[slot] + float(threadIdx.x);
  if (barrier)
    __syncthreads();
  if (threadIdx.x == kThreads - 1)
    totals[slot] = 0.0f;
}

/// Every thread of every block writes its index to out[0].
/// Each thread stages in[t]; after a barrier it reads its partner's value (thread t ^
/// partner) into out[t] and overwrites its own slot, with a __syncwarp() between the read
/// and the overwrite when `warpSync`.
__global__ void readThenOverwrite(const float *in, float *out, unsigned partner, bool warpSync) {
  __shared__ float staged[kThreads];
  staged[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = staged[threadIdx.x ^ partner];
  if (warpSync)
    __syncwarp();
  staged[threadIdx.x] = -1.0f;
}

__global__ void everyoneWritesOne(float *out) { out[0] = float(threadIdx.x); }

/// Each block's thread 0 takes the next ticket from counter[slot] and writes it to
/// arrivals[blockIdx.x]; the last block puts the counter back to zero. The slot is an
/// argument, so that `slot` past the counter's end is an out-of-bounds atomic.
__global__ void takeTickets(unsigned *counter, int slot, float *arrivals) {
  if (threadIdx.x != 0)
    return;
  const unsigned ticket = atomicAdd(&counter[slot], 1u);
  arrivals[blockIdx.x] = float(ticket);
  if (ticket == gridDim.x - 1)
    atomicExch(&counter[slot], 0u);
}

class CheckersTest : public ::testing::Test {
protected:
  void TearDown() override { clearDeviceFaults(); }

  float *deviceArray(size_t count, float value) {
    float *data = nullptr;
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void **>(&data), count * sizeof(float)), cudaSuccess);
    std::vector<float> host(count, value);
    EXPECT_EQ(cudaMemcpy(data, host.data(), count * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
    allocations.push_back(data);
    return data;
  }
  /// A device array of count floats holding 0, 1, 2, ...
  float *deviceIota(size_t count) {
    float *data = deviceArray(count, 0.0f);
    std::vector<float> host(count);
    for (size_t i = 0; i < count; ++i)
      host[i] = float(i);
    EXPECT_EQ(cudaMemcpy(data, host.data(), count * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
    return data;
  }
  std::vector<float> download(const float *data, size_t count) {
    std::vector<float> host(count);
    EXPECT_EQ(cudaMemcpy(host.data(), data, count * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return host;
  }
  /// The single report raised, which must match `pattern`; the error is sticky until then.
  void expectOneReport(const std::string &pattern) {
    ASSERT_EQ(faultReports().size(), 1u);
    EXPECT_TRUE(std::regex_search(faultReports()[0], std::regex(pattern))) << faultReports()[0];
    EXPECT_NE(cudaDeviceSynchronize(), cudaSuccess);
  }
  ~CheckersTest() override {
    for (float *data : allocations)
      cudaFree(data);
  }

private:
  std::vector<float *> allocations;
};

TEST_F(CheckersTest, SharedMemoryWithABarrierIsCleanAndCorrect) {
  float *in = deviceIota(kThreads), *out = deviceArray(kThreads, 0.0f);
  launchOn(
      "shiftThroughShared", 1, kThreads, [](auto... a) { shiftThroughShared(a...); }, in, out,
      true);
  EXPECT_TRUE(faultReports().empty());
  std::vector<float> expected(kThreads);
  for (int i = 0; i < kThreads; ++i)
    expected[i] = float(i > 0 ? i - 1 : 0);
  EXPECT_EQ(download(out, kThreads), expected);
}

TEST_F(CheckersTest, MissingBarrierIsASharedMemoryRace) {
  float *in = deviceArray(kThreads, 1.0f), *out = deviceArray(kThreads, 0.0f);
  launchOn(
      "shiftThroughShared", 1, kThreads, [](auto... a) { shiftThroughShared(a...); }, in, out,
      false);
  // Thread 1 reads staged[0], which thread 0 wrote with no barrier between.
  expectOneReport("^kernel shiftThroughShared block \\(0,0,0\\) thread \\(1,0,0\\): shared "
                  "memory race: read of 4 bytes at 0x[0-9a-f]+ after thread index 0 wrote it");
}

TEST_F(CheckersTest, MissingBarrierReadingAheadReadsUnwrittenSharedMemory) {
  float *in = deviceArray(kThreads, 1.0f), *out = deviceArray(kThreads, 0.0f);
  launchOn("readAhead", 1, kThreads, [](auto... a) { readAhead(a...); }, in, out);
  // Thread 0 reads staged[1] before thread 1 has run: on a GPU the read races the write.
  expectOneReport("^kernel readAhead block \\(0,0,0\\) thread \\(0,0,0\\): shared memory read "
                  "of 4 bytes at 0x[0-9a-f]+ reads bytes no thread of the block has written");
}

TEST_F(CheckersTest, WriteOverAValueOtherThreadsReadIsARaceUnlessABarrierSeparatesThem) {
  float *in = deviceArray(1, 5.0f), *out = deviceArray(kThreads, 0.0f);
  launchOn(
      "overwriteWhileRead", 1, kThreads, [](auto... a) { overwriteWhileRead(a...); }, in, out, 0,
      true);
  EXPECT_TRUE(faultReports().empty());
  std::vector<float> expected(kThreads);
  for (int i = 0; i < kThreads; ++i)
    expected[i] = 5.0f + float(i);
  EXPECT_EQ(download(out, kThreads), expected);
  // Without the barrier the last thread's write races the reads of the 63 threads before it.
  launchOn(
      "overwriteWhileRead", 1, kThreads, [](auto... a) { overwriteWhileRead(a...); }, in, out, 0,
      false);
  expectOneReport("^kernel overwriteWhileRead block \\(0,0,0\\) thread \\(63,0,0\\): shared "
                  "memory race: write of 4 bytes at 0x[0-9a-f]+ after other threads read it");
}

// A __syncwarp orders the accesses of its warp's lanes, and only theirs.
TEST_F(CheckersTest, SyncwarpOrdersSharedMemoryWithinItsWarpOnly) {
  float *in = deviceIota(kThreads), *out = deviceArray(kThreads, 0.0f);
  auto run = [&](unsigned partner, bool warpSync) {
    launchOn(
        "readThenOverwrite", 1, kThreads, [](auto... a) { readThenOverwrite(a...); }, in, out,
        partner, warpSync);
  };
  run(1, true);
  EXPECT_TRUE(faultReports().empty());
  std::vector<float> expected(kThreads);
  for (int i = 0; i < kThreads; ++i)
    expected[i] = float(i ^ 1);
  EXPECT_EQ(download(out, kThreads), expected);
  // Without it, thread 1 reads the slot thread 0 has overwritten since the barrier.
  run(1, false);
  expectOneReport("^kernel readThenOverwrite block \\(0,0,0\\) thread \\(1,0,0\\): shared "
                  "memory race: read of 4 bytes at 0x[0-9a-f]+ after thread index 0 wrote it");
  clearDeviceFaults();
  // A warp's __syncwarp does not order its overwrites before the other warp's reads.
  run(32, true);
  expectOneReport(
      "^kernel readThenOverwrite block \\(0,0,0\\) thread \\(([4-6][0-9]|3[2-9]),0,0\\): "
      "shared memory race: read of 4 bytes at 0x[0-9a-f]+ after thread index "
      "([12]?[0-9]|3[01]) wrote it");
}

TEST_F(CheckersTest, OffByOneIndexIsOutOfBounds) {
  const int n = 100;
  float *in = deviceArray(n, 1.0f), *out = deviceArray(n, 0.0f);
  launchOn("scale", 2, kThreads, [](auto... a) { scale(a...); }, in, out, n, false);
  EXPECT_TRUE(faultReports().empty());
  EXPECT_EQ(download(out, n), std::vector<float>(n, 2.0f));
  launchOn("scale", 2, kThreads, [](auto... a) { scale(a...); }, in, out, n, true);
  // Thread 36 of block 1 is element 100: its read of in[100] is the first access past the end.
  const std::string address = [&] {
    char text[32];
    std::snprintf(text, sizeof text, "%p", static_cast<void *>(in + n));
    return std::string(text);
  }();
  expectOneReport("^kernel scale block \\(1,0,0\\) thread \\(36,0,0\\): out-of-bounds read of 4 "
                  "bytes at " +
                  address);
}

TEST_F(CheckersTest, ReadOfUnwrittenSharedMemory) {
  float *out = deviceArray(kThreads, 0.0f);
  launchOn("readUnwritten", 1, kThreads, [](auto... a) { readUnwritten(a...); }, out);
  expectOneReport("^kernel readUnwritten block \\(0,0,0\\) thread \\(0,0,0\\): shared memory "
                  "read of 4 bytes at 0x[0-9a-f]+ reads bytes no thread of the block has written");
}

TEST_F(CheckersTest, TwoThreadsWritingOneAddressRace) {
  float *out = deviceArray(1, 0.0f);
  launchOn("everyoneWritesOne", 1, 2, [](auto... a) { everyoneWritesOne(a...); }, out);
  expectOneReport("^kernel everyoneWritesOne block \\(0,0,0\\) thread \\(1,0,0\\): global memory "
                  "race: write of 4 bytes at 0x[0-9a-f]+ after thread index 0 wrote it");
}

TEST_F(CheckersTest, TwoBlocksWritingOneAddressRace) {
  float *out = deviceArray(1, 0.0f);
  launchOn("everyoneWritesOne", 2, 1, [](auto... a) { everyoneWritesOne(a...); }, out);
  // The blocks run last first: block 1 writes, then block 0.
  expectOneReport("^kernel everyoneWritesOne block \\(0,0,0\\) thread \\(0,0,0\\): global memory "
                  "race: write of 4 bytes at 0x[0-9a-f]+ after thread index 0 of block 1");
}

// Atomics from every block on one word are no race; each block gets its own ticket, in the
// order the blocks run (last first), and the counter ends at zero.
TEST_F(CheckersTest, AtomicsFromEveryBlockAreNoRace) {
  unsigned *counter = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&counter), sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMemset(counter, 0, sizeof(unsigned)), cudaSuccess);
  float *arrivals = deviceArray(4, -1.0f);
  launchOn("takeTickets", 4, 2, [](auto... a) { takeTickets(a...); }, counter, 0, arrivals);
  EXPECT_TRUE(faultReports().empty());
  EXPECT_EQ(download(arrivals, 4), (std::vector<float>{3.0f, 2.0f, 1.0f, 0.0f}));
  unsigned left = 1;
  ASSERT_EQ(cudaMemcpy(&left, counter, sizeof left, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(left, 0u);
  // One word past the counter's allocation is out of bounds, atomic or not.
  launchOn("takeTickets", 1, 1, [](auto... a) { takeTickets(a...); }, counter, 1, arrivals);
  expectOneReport("^kernel takeTickets block \\(0,0,0\\) thread \\(0,0,0\\): out-of-bounds read of "
                  "4 bytes");
  cudaFree(counter);
}

} // namespace
} // namespace bertc::sim::test
