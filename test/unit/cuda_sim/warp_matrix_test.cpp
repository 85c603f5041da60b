// The simulated device's warp matrix instructions (bertc/cuda_sim/warp_matrix.h) in one-warp
// kernels, against the layouts as the PTX ISA documents them, written out here lane by lane
// (not through the stand-ins' own lookups): mma.sync m16n8k16 of __nv_bfloat16 and __half
// fragments against a double reference, and runtime/cuda/warp_matrix.cuh's sm_75 form of
// it, two m16n8k8 products; ldmatrix .x4, plain and transposed, against the
// elements each lane must receive, and its count of shared-memory bank conflicts; and the misuses a
// GPU reports (a misaligned row address, a warp whose lanes do not all arrive), each caught without
// touching memory.
#include "cublaslt_fixture.h" // DeviceBuffer

#include "bertc/cuda_sim/faults.h"
#include "bertc/cuda_sim/launch.h"
#include "bertc/cuda_sim/warp_matrix.h"
#include "warp_matrix.cuh" // runtime/cuda's, as its simulated build has it

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

namespace bertc::sim::test {
namespace {

constexpr int kM = 16, kN = 8, kK = 32; // two k-steps of 16
constexpr float kUntouched = 1234.5f;

template <typename W> uint16_t bitsOf(W value) {
  uint16_t bits;
  __builtin_memcpy(&bits, &value, sizeof bits);
  return bits;
}

/// Two 16-bit values as one register, the first in the low half.
template <typename W> uint32_t pairOf(W low, W high) {
  return uint32_t(bitsOf(low)) | uint32_t(bitsOf(high)) << 16;
}

/// d = c + a b for a of kM x kK (row major), b of kK x kN (row major: b[k * kN + n]) and c,
/// d of kM x kN (row major), as two m16n8k16 steps. Lane l (g = l / 4, t = l % 4) builds
/// its registers as the PTX ISA lays them out: a0 = A(g, 2t..2t+1), a1 = A(g + 8, 2t..),
/// a2 = A(g, 2t + 8..), a3 = A(g + 8, 2t + 8..); b0 = B(2t..2t+1, g), b1 = B(2t + 8.., g);
/// c0, c1 = C(g, 2t), C(g, 2t + 1); c2, c3 = C(g + 8, 2t), C(g + 8, 2t + 1). AsK8Pair: each
/// step as the two m16n8k8 products sm_75 runs for fp16.
template <typename W, bool AsK8Pair>
__global__ void productByLayout(const W *a, const W *b, const float *c, float *d) {
  const int g = int(threadIdx.x) / 4, t = int(threadIdx.x) % 4;
  float acc[4];
  for (int e = 0; e < 4; ++e)
    acc[e] = c[(g + 8 * (e / 2)) * kN + 2 * t + e % 2];
  for (int step = 0; step < kK / 16; ++step) {
    const int k0 = 16 * step;
    const auto aAt = [&](int row, int k) { return a[row * kK + k0 + k]; };
    const auto bAt = [&](int k, int n) { return b[(k0 + k) * kN + n]; };
    const uint32_t aRegisters[4] = {pairOf(aAt(g, 2 * t), aAt(g, 2 * t + 1)),
                                    pairOf(aAt(g + 8, 2 * t), aAt(g + 8, 2 * t + 1)),
                                    pairOf(aAt(g, 2 * t + 8), aAt(g, 2 * t + 9)),
                                    pairOf(aAt(g + 8, 2 * t + 8), aAt(g + 8, 2 * t + 9))};
    const uint32_t bRegisters[2] = {pairOf(bAt(2 * t, g), bAt(2 * t + 1, g)),
                                    pairOf(bAt(2 * t + 8, g), bAt(2 * t + 9, g))};
    if constexpr (AsK8Pair)
      cuda::warp_matrix::mmaM16N8K16AsK8Pair<W>(acc, aRegisters, bRegisters);
    else
      mmaM16N8K16<W>(acc, aRegisters, bRegisters);
  }
  for (int e = 0; e < 4; ++e)
    d[(g + 8 * (e / 2)) * kN + 2 * t + e % 2] = acc[e];
}

constexpr int kTileSide = 16, kTileStride = 24; // rows 48 bytes apart: 16-byte aligned

/// Copies the 16 x 16 tile `in` into shared memory (rows kTileStride values apart), then
/// every lane gives ldmatrix row `lane % 8` of matrix `lane / 8`, the matrices being the
/// tile's quarters (upper left, lower left, upper right, lower right), shifted by
/// `rowShift` values; lane l stores its four registers at out[4 l ..].
template <bool Transposed>
__global__ void loadQuarters(const __half *in, int rowShift, uint32_t *out) {
  __shared__ __align__(16) __half tile[kTileSide * kTileStride + 8];
  for (int i = int(threadIdx.x); i < kTileSide * kTileSide; i += 32)
    tile[(i / kTileSide) * kTileStride + i % kTileSide] = in[i];
  __syncwarp();
  const int lane = int(threadIdx.x), matrix = lane / 8;
  const __half *row =
      tile + (8 * (matrix % 2) + lane % 8) * kTileStride + 8 * (matrix / 2) + rowShift;
  uint32_t r[4] = {0, 0, 0, 0};
  loadMatrixX4<Transposed>(r, row);
  for (int j = 0; j < 4; ++j)
    out[4 * lane + j] = r[j];
}

constexpr int kMaxRowStride = 72;

/// Every lane gives ldmatrix the row `lane` of a shared tile whose rows are `rowStride`
/// values apart (0: all lanes the same row).
__global__ void loadRowsApart(int rowStride) {
  __shared__ __align__(128) __half tile[32 * kMaxRowStride + 8];
  for (int i = int(threadIdx.x); i < 32 * kMaxRowStride + 8; i += 32)
    tile[i] = __float2half_rn(0.0f);
  __syncwarp();
  uint32_t r[4];
  loadMatrixX4<false>(r, tile + int(threadIdx.x) * rowStride);
}

enum class Instruction { Mma, LoadMatrix };

/// Only the lower half of the warp (or, `upperHalf`, the upper half) issues `instruction`;
/// the other lanes exit.
__global__ void halfWarpIssues(Instruction instruction, bool upperHalf) {
  __shared__ __align__(16) __half tile[16 * 8];
  if ((threadIdx.x >= 16) != upperHalf)
    return;
  for (int i = int(threadIdx.x) % 16; i < 16 * 8; i += 16)
    tile[i] = __float2half_rn(1.0f);
  float d[4] = {0, 0, 0, 0};
  uint32_t r[4] = {0, 0, 0, 0};
  if (instruction == Instruction::Mma)
    mmaM16N8K16<__half>(d, r, {r[0], r[1]});
  else
    loadMatrixX4<false>(r, tile + 8 * (threadIdx.x % 16));
}

template <typename Kernel, typename... Args>
void launchWarp(const char *name, Kernel kernel, Args... args) {
  launchKernel({name, 1, 32, 0, nullptr}, kernel, args...);
}

/// A value in [-1, 1) at full float precision, unrelated to its neighbours'.
float valueAt(unsigned index, unsigned salt) {
  uint32_t hash = (index + 1) * 2654435761u ^ salt * 40503u;
  hash ^= hash >> 15;
  hash *= 2246822519u;
  hash ^= hash >> 13;
  return float(hash >> 8) * 0x1p-23f - 1.0f;
}

template <typename T> T roundedTo(float value);
template <> __nv_bfloat16 roundedTo(float value) { return __float2bfloat16_rn(value); }
template <> __half roundedTo(float value) { return __float2half_rn(value); }
double widened(__nv_bfloat16 value) { return __bfloat162float(value); }
double widened(__half value) { return __half2float(value); }

class WarpMatrixTest : public ::testing::Test {
protected:
  void TearDown() override { clearDeviceFaults(); }

  template <typename W, bool AsK8Pair = false> void expectProduct() {
    std::vector<W> a(kM * kK), b(kK * kN);
    std::vector<float> c(kM * kN);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = roundedTo<W>(valueAt(unsigned(i), 1));
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = roundedTo<W>(valueAt(unsigned(i), 2));
    for (size_t i = 0; i < c.size(); ++i)
      c[i] = valueAt(unsigned(i), 3);
    DeviceBuffer<W> aDevice(a), bDevice(b);
    DeviceBuffer<float> cDevice(c), dDevice(std::vector<float>(kM * kN, kUntouched));
    launchWarp(
        "productByLayout", [](auto... args) { productByLayout<W, AsK8Pair>(args...); },
        aDevice.get(), bDevice.get(), cDevice.get(), dDevice.get());
    ASSERT_TRUE(faultReports().empty()) << faultReports()[0];
    const std::vector<float> d = dDevice.download();
    for (int row = 0; row < kM; ++row)
      for (int column = 0; column < kN; ++column) {
        double expected = c[row * kN + column], magnitude = std::fabs(expected);
        for (int k = 0; k < kK; ++k) {
          const double term = widened(a[row * kK + k]) * widened(b[k * kN + column]);
          expected += term;
          magnitude += std::fabs(term);
        }
        EXPECT_NEAR(d[row * kN + column], expected, 1e-6 * magnitude)
            << "d(" << row << ", " << column << ")";
      }
  }

  /// The registers loadQuarters<Transposed> gave each lane, against the tile's values.
  template <bool Transposed> void expectQuarters() {
    std::vector<__half> tile(kTileSide * kTileSide);
    for (int i = 0; i < kTileSide * kTileSide; ++i)
      tile[i] = __float2half_rn(float(i)); // exact: every value below 2048
    DeviceBuffer<__half> in(tile);
    DeviceBuffer<uint32_t> out(std::vector<uint32_t>(32 * 4, 0xdeadbeefu));
    launchWarp(
        "loadQuarters", [](auto... args) { loadQuarters<Transposed>(args...); }, in.get(), 0,
        out.get());
    ASSERT_TRUE(faultReports().empty()) << faultReports()[0];
    const std::vector<uint32_t> registers = out.download();
    for (int lane = 0; lane < 32; ++lane)
      for (int j = 0; j < 4; ++j) {
        // Matrix j is the quarter at rows 8 (j % 2), columns 8 (j / 2); lane l gets its row
        // l / 4, columns 2 (l % 4) and + 1, or transposed, rows 2 (l % 4) and + 1 of column
        // l / 4.
        const auto quarter = [&](int row, int column) {
          return tile[(8 * (j % 2) + row) * kTileSide + 8 * (j / 2) + column];
        };
        const uint32_t expected =
            Transposed
                ? pairOf(quarter(2 * (lane % 4), lane / 4), quarter(2 * (lane % 4) + 1, lane / 4))
                : pairOf(quarter(lane / 4, 2 * (lane % 4)), quarter(lane / 4, 2 * (lane % 4) + 1));
        EXPECT_EQ(registers[4 * lane + j], expected) << "lane " << lane << ", register " << j;
      }
  }
};

TEST_F(WarpMatrixTest, Bfloat16ProductFollowsTheDocumentedLayout) {
  expectProduct<__nv_bfloat16>();
}

TEST_F(WarpMatrixTest, HalfProductFollowsTheDocumentedLayout) { expectProduct<__half>(); }

TEST_F(WarpMatrixTest, HalfProductAsTwoK8ProductsFollowsTheDocumentedLayout) {
  expectProduct<__half, true>();
}

TEST_F(WarpMatrixTest, LoadMatrixGivesEachLaneItsRowsPair) { expectQuarters<false>(); }

TEST_F(WarpMatrixTest, TransposedLoadMatrixGivesEachLaneItsColumnsPair) { expectQuarters<true>(); }

// A matrix's 8 rows take one pass when they fall in distinct 16-byte groups of the 32 banks
// (address / 16 % 8), and one more for each further row in the fullest group.
TEST_F(WarpMatrixTest, LoadMatrixCountsTheBankConflictsOfItsRows) {
  struct Case {
    int rowStride;
    uint64_t conflicts; // of the four matrices together
  };
  const Case cases[] = {
      {8, 0},   // 16 bytes apart: groups 0, 1, .., 7
      {16, 4},  // 32 bytes: groups 0, 2, 4, 6 twice, two passes a matrix
      {64, 28}, // 128 bytes: all in group 0, eight passes a matrix
      {72, 0},  // 144 bytes (a 64-value row and 8 of padding): groups 0, 1, .., 7
      {0, 0},   // one row for every lane: read once
  };
  for (const Case &c : cases) {
    resetMatrixLoadCounts();
    launchWarp("loadRowsApart", [](auto... args) { loadRowsApart(args...); }, c.rowStride);
    ASSERT_TRUE(faultReports().empty()) << faultReports()[0];
    EXPECT_EQ(matrixLoadCounts().matrices, 4u) << "rows " << c.rowStride << " values apart";
    EXPECT_EQ(matrixLoadCounts().bankConflicts, c.conflicts)
        << "rows " << c.rowStride << " values apart";
  }
}

// Rows 8 bytes off their alignment: one fault for the warp, and no register loaded.
TEST_F(WarpMatrixTest, MisalignedRowAddressIsAMisalignedAddressFault) {
  DeviceBuffer<__half> in(std::vector<__half>(kTileSide * kTileSide, __float2half_rn(1.0f)));
  DeviceBuffer<uint32_t> out(std::vector<uint32_t>(32 * 4, 0xdeadbeefu));
  launchWarp(
      "loadQuarters", [](auto... args) { loadQuarters<false>(args...); }, in.get(), 4, out.get());
  ASSERT_EQ(faultReports().size(), 1u);
  EXPECT_TRUE(std::regex_search(
      faultReports()[0], std::regex("^block \\(0,0,0\\) thread \\([0-9]+,0,0\\): ldmatrix: row "
                                    "address 0x[0-9a-f]+ is not aligned to 16 bytes$")))
      << faultReports()[0];
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorMisalignedAddress);
  clearDeviceFaults();
}

// Either half alone waits for, or meets, lanes that have exited: the report of a diverged
// __syncwarp.
TEST_F(WarpMatrixTest, InstructionIssuedByHalfTheWarpIsReportedAsADivergedSyncwarp) {
  for (Instruction instruction : {Instruction::Mma, Instruction::LoadMatrix})
    for (bool upperHalf : {false, true}) {
      launchWarp(
          "halfWarpIssues", [](auto... args) { halfWarpIssues(args...); }, instruction, upperHalf);
      ASSERT_EQ(faultReports().size(), 1u) << int(instruction) << ", " << upperHalf;
      EXPECT_TRUE(std::regex_search(
          faultReports()[0],
          std::regex(upperHalf ? "__syncwarp: lane 0 of the mask has already exited$"
                               : "threads wait forever: thread \\(0,0,0\\) in __syncwarp")))
          << faultReports()[0];
      clearDeviceFaults();
    }
}

} // namespace
} // namespace bertc::sim::test
