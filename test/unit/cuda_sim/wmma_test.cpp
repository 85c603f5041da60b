// The simulated device's warp matrix functions (mma.h) in one-warp kernels: a tiled product
// of __nv_bfloat16 and __half matrices in both layouts against a double reference; the
// accumulator's loads and stores in both layouts, through shared memory; the elementwise
// use of a fragment; and the misuses a GPU reports (misaligned tiles, a warp whose lanes do
// not all arrive, a tile past its allocation), each caught without touching memory.
#include "cublaslt_fixture.h" // DeviceBuffer

#include "bertc/cuda_sim/faults.h"
#include "bertc/cuda_sim/launch.h"

#include <mma.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

namespace bertc::sim::test {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int kTile = 16;
constexpr float kUntouched = 1234.5f;

/// Where element (row, column) of a matrix lies, row- or column-major with leading dimension ld.
constexpr size_t at(int row, int column, unsigned ld, bool rowMajor) {
  return rowMajor ? size_t(row) * ld + size_t(column) : size_t(column) * ld + size_t(row);
}

template <typename Layout> constexpr bool kRowMajor = std::is_same_v<Layout, wmma::row_major>;

/// c = a * b + c0 for a of 32x48, b of 48x32 and c of 32x32, as 2x2 output tiles of 16x16
/// and 3 k-steps; a and b lie as their layouts say, c0 and c as layoutC says.
template <typename T, typename LayoutA, typename LayoutB>
__global__ void tiledProduct(const T *a, unsigned lda, const T *b, unsigned ldb, const float *c0,
                             float *c, unsigned ldc, wmma::layout_t layoutC) {
  const bool cRowMajor = layoutC == wmma::mem_row_major;
  for (int tileRow = 0; tileRow < 2; ++tileRow)
    for (int tileColumn = 0; tileColumn < 2; ++tileColumn) {
      const size_t cTile = at(tileRow * kTile, tileColumn * kTile, ldc, cRowMajor);
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> sum;
      wmma::load_matrix_sync(sum, c0 + cTile, ldc, layoutC);
      for (int step = 0; step < 3; ++step) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, LayoutA> aTile;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, LayoutB> bTile;
        wmma::load_matrix_sync(aTile,
                               a + at(tileRow * kTile, step * kTile, lda, kRowMajor<LayoutA>), lda);
        wmma::load_matrix_sync(
            bTile, b + at(step * kTile, tileColumn * kTile, ldb, kRowMajor<LayoutB>), ldb);
        wmma::mma_sync(sum, aTile, bTile, sum);
      }
      wmma::store_matrix_sync(c + cTile, sum, ldc, layoutC);
    }
}

constexpr unsigned kStagedLd = 20;

/// Loads the row-major tile `in`, stores it column-major (ldm kStagedLd) to shared memory and
/// copies the staged tile's elements to `staged`; loads the staged tile back column-major and
/// stores it row-major to `roundTrip`.
__global__ void roundTripThroughShared(const float *in, float *staged, float *roundTrip) {
  __shared__ __align__(32) float tile[kTile * kStagedLd];
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> loaded, reloaded;
  wmma::load_matrix_sync(loaded, in, kTile, wmma::mem_row_major);
  wmma::store_matrix_sync(tile, loaded, kStagedLd, wmma::mem_col_major);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < kTile * kStagedLd; i += warpSize)
    if (i % kStagedLd < kTile)
      staged[i] = tile[i];
  wmma::load_matrix_sync(reloaded, tile, kStagedLd, wmma::mem_col_major);
  wmma::store_matrix_sync(roundTrip, reloaded, kTile, wmma::mem_row_major);
}

/// Fills one accumulator with `value` and loads another from `in`, doubles every element of
/// both, and stores them row-major to `filled` and `doubled`.
__global__ void fillAndDouble(const float *in, float value, float *filled, float *doubled) {
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> constant, loaded;
  wmma::fill_fragment(constant, value);
  wmma::load_matrix_sync(loaded, in, kTile, wmma::mem_row_major);
  for (int i = 0; i < constant.num_elements; ++i) {
    constant.x[i] *= 2.0f;
    loaded.x[i] *= 2.0f;
  }
  wmma::store_matrix_sync(filled, constant, kTile, wmma::mem_row_major);
  wmma::store_matrix_sync(doubled, loaded, kTile, wmma::mem_row_major);
}

/// Loads a row-major bf16 matrix_a tile from `in` with leading dimension ldm and stores its
/// product with a tile of ones (each row's sum, 16 times) row-major to `sums`. (A tile that
/// is loaded and not used is not loaded at all: the host compiler drops the dead loads.)
__global__ void rowSumsOfBfloat16Tile(const __nv_bfloat16 *in, unsigned ldm, float *sums) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> tile;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> ones;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> product;
  wmma::fill_fragment(ones, __float2bfloat16_rn(1.0f));
  wmma::fill_fragment(product, 0.0f);
  wmma::load_matrix_sync(tile, in, ldm);
  wmma::mma_sync(product, tile, ones, product);
  wmma::store_matrix_sync(sums, product, kTile, wmma::mem_row_major);
}

/// Stores an accumulator of ones row-major to `out` with leading dimension ldm.
__global__ void storeOnes(float *out, unsigned ldm) {
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> ones;
  wmma::fill_fragment(ones, 1.0f);
  wmma::store_matrix_sync(out, ones, ldm, wmma::mem_row_major);
}

enum class Collective { SyncWarp, MmaSync, LoadMatrixSync, StoreMatrixSync };

/// Only the lower half of the warp (or, `upperHalf`, the upper half) calls `collective`; the
/// other lanes exit. `tile` is a 16x16 float tile to load from or store to.
__global__ void halfWarpCalls(Collective collective, bool upperHalf, float *tile) {
  if ((threadIdx.x >= 16) != upperHalf)
    return;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fill_fragment(a, __float2half_rn(1.0f));
  wmma::fill_fragment(b, __float2half_rn(1.0f));
  wmma::fill_fragment(c, 0.0f);
  switch (collective) {
  case Collective::SyncWarp:
    __syncwarp();
    break;
  case Collective::MmaSync:
    wmma::mma_sync(c, a, b, c);
    break;
  case Collective::LoadMatrixSync:
    wmma::load_matrix_sync(c, tile, kTile, wmma::mem_row_major);
    break;
  case Collective::StoreMatrixSync:
    wmma::store_matrix_sync(tile, c, kTile, wmma::mem_row_major);
    break;
  }
}

/// Launches `kernel` on one warp, as BERTC_LAUNCH does on the simulated device.
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

std::string pointerText(const void *pointer) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", pointer);
  return text;
}

class WmmaTest : public ::testing::Test {
protected:
  void TearDown() override { clearDeviceFaults(); }

  /// The single report raised, which must match `pattern`, and the sticky error `error`;
  /// then forgets them, so that the test's buffers can be read and freed.
  void expectOneFault(const std::string &pattern, cudaError_t error) {
    ASSERT_EQ(faultReports().size(), 1u);
    EXPECT_TRUE(std::regex_search(faultReports()[0], std::regex(pattern))) << faultReports()[0];
    EXPECT_EQ(cudaDeviceSynchronize(), error);
    clearDeviceFaults();
  }

  /// Runs tiledProduct with the given leading dimensions (each beyond its tile, so the
  /// matrices carry padding) and checks c element by element against a double reference
  /// of the rounded inputs, and that c's padding is untouched.
  template <typename T, typename LayoutA, typename LayoutB>
  void expectTiledProduct(unsigned lda, unsigned ldb, unsigned ldc, wmma::layout_t layoutC) {
    constexpr int m = 32, n = 32, k = 48;
    const bool aRowMajor = kRowMajor<LayoutA>, bRowMajor = kRowMajor<LayoutB>,
               cRowMajor = layoutC == wmma::mem_row_major;
    std::vector<T> a((aRowMajor ? m : k) * lda, roundedTo<T>(NAN)),
        b((bRowMajor ? k : n) * ldb, roundedTo<T>(NAN));
    std::vector<float> c0((cRowMajor ? m : n) * ldc, NAN);
    for (int row = 0; row < m; ++row)
      for (int inner = 0; inner < k; ++inner)
        a[at(row, inner, lda, aRowMajor)] = roundedTo<T>(valueAt(row * k + inner, 1));
    for (int inner = 0; inner < k; ++inner)
      for (int column = 0; column < n; ++column)
        b[at(inner, column, ldb, bRowMajor)] = roundedTo<T>(valueAt(inner * n + column, 2));
    for (int row = 0; row < m; ++row)
      for (int column = 0; column < n; ++column)
        c0[at(row, column, ldc, cRowMajor)] = valueAt(row * n + column, 3);
    DeviceBuffer<T> aDevice(a), bDevice(b);
    DeviceBuffer<float> c0Device(c0), cDevice(std::vector<float>(c0.size(), kUntouched));
    launchWarp(
        "tiledProduct", [](auto... args) { tiledProduct<T, LayoutA, LayoutB>(args...); },
        aDevice.get(), lda, bDevice.get(), ldb, c0Device.get(), cDevice.get(), ldc, layoutC);
    ASSERT_TRUE(faultReports().empty()) << faultReports()[0];
    const std::vector<float> c = cDevice.download();
    for (int row = 0; row < m; ++row)
      for (int column = 0; column < n; ++column) {
        double expected = c0[at(row, column, ldc, cRowMajor)];
        double magnitude = std::fabs(expected);
        for (int inner = 0; inner < k; ++inner) {
          const double term = widened(a[at(row, inner, lda, aRowMajor)]) *
                              widened(b[at(inner, column, ldb, bRowMajor)]);
          expected += term;
          magnitude += std::fabs(term);
        }
        EXPECT_NEAR(c[at(row, column, ldc, cRowMajor)], expected, 1e-6 * magnitude)
            << "c(" << row << ", " << column << ")";
      }
    for (unsigned line = 0; line < 32; ++line)
      for (unsigned pad = 32; pad < ldc; ++pad)
        EXPECT_EQ(c[line * ldc + pad], kUntouched) << "padding " << line << ", " << pad;
  }
};

TEST_F(WmmaTest, Bfloat16ProductOfRowMajorAAndColMajorB) {
  expectTiledProduct<__nv_bfloat16, wmma::row_major, wmma::col_major>(56, 56, 36,
                                                                      wmma::mem_row_major);
}

TEST_F(WmmaTest, Bfloat16ProductOfColMajorAAndRowMajorB) {
  expectTiledProduct<__nv_bfloat16, wmma::col_major, wmma::row_major>(40, 40, 40,
                                                                      wmma::mem_col_major);
}

TEST_F(WmmaTest, HalfProductOfRowMajorAAndColMajorB) {
  expectTiledProduct<__half, wmma::row_major, wmma::col_major>(56, 56, 36, wmma::mem_row_major);
}

TEST_F(WmmaTest, HalfProductOfColMajorAAndRowMajorB) {
  expectTiledProduct<__half, wmma::col_major, wmma::row_major>(40, 40, 40, wmma::mem_col_major);
}

// A column-major store transposes the tile into shared memory (its padding unwritten), and a
// column-major load of it gives the tile back.
TEST_F(WmmaTest, AccumulatorRoundTripsThroughSharedMemoryInBothLayouts) {
  std::vector<float> in(kTile * kTile);
  for (int i = 0; i < kTile * kTile; ++i)
    in[i] = float(i);
  DeviceBuffer<float> inDevice(in), stagedDevice(std::vector<float>(kTile * kStagedLd, kUntouched)),
      roundTripDevice(std::vector<float>(kTile * kTile, kUntouched));
  launchWarp(
      "roundTripThroughShared", [](auto... args) { roundTripThroughShared(args...); },
      inDevice.get(), stagedDevice.get(), roundTripDevice.get());
  ASSERT_TRUE(faultReports().empty()) << faultReports()[0];
  const std::vector<float> staged = stagedDevice.download();
  for (int column = 0; column < kTile; ++column)
    for (unsigned line = 0; line < kStagedLd; ++line)
      EXPECT_EQ(staged[column * kStagedLd + line],
                line < kTile ? in[line * kTile + column] : kUntouched)
          << "staged column " << column << ", row " << line;
  EXPECT_EQ(roundTripDevice.download(), in);
}

TEST_F(WmmaTest, FillAndElementwiseScalingActOnEveryElement) {
  std::vector<float> in(kTile * kTile), doubledIn(kTile * kTile);
  for (int i = 0; i < kTile * kTile; ++i) {
    in[i] = float(i) - 100.25f;
    doubledIn[i] = 2.0f * in[i];
  }
  DeviceBuffer<float> inDevice(in), filled(std::vector<float>(kTile * kTile, kUntouched)),
      doubled(std::vector<float>(kTile * kTile, kUntouched));
  launchWarp(
      "fillAndDouble", [](auto... args) { fillAndDouble(args...); }, inDevice.get(), 1.5f,
      filled.get(), doubled.get());
  ASSERT_TRUE(faultReports().empty()) << faultReports()[0];
  EXPECT_EQ(filled.download(), std::vector<float>(kTile * kTile, 3.0f));
  EXPECT_EQ(doubled.download(), doubledIn);
}

// Each buffer is just large enough for what a right call would access, so a faulting load
// that read the tile anyway would also be caught out of bounds: one report per kernel shows
// that no lane read it, and `sums` keeps its values since nothing runs on after the fault.
// Every lane calls; one fault is reported.
TEST_F(WmmaTest, MisalignedTileIsAMisalignedAddressFault) {
  DeviceBuffer<__nv_bfloat16> in(
      std::vector<__nv_bfloat16>(kTile * kTile, __float2bfloat16_rn(0.5f)));
  DeviceBuffer<float> sums(std::vector<float>(kTile * kTile, kUntouched));
  launchWarp(
      "rowSumsOfBfloat16Tile", [](auto... args) { rowSumsOfBfloat16Tile(args...); }, in.get(),
      unsigned(kTile), sums.get());
  ASSERT_TRUE(faultReports().empty()) << faultReports()[0];
  EXPECT_EQ(sums.download(), std::vector<float>(kTile * kTile, 8.0f));

  DeviceBuffer<__nv_bfloat16> shiftedIn(
      std::vector<__nv_bfloat16>(kTile * kTile, __float2bfloat16_rn(0.5f)));
  DeviceBuffer<float> untouchedSums(std::vector<float>(kTile * kTile, kUntouched));
  launchWarp(
      "rowSumsOfBfloat16Tile", [](auto... args) { rowSumsOfBfloat16Tile(args...); },
      shiftedIn.get() + 1, unsigned(kTile), untouchedSums.get());
  expectOneFault("^block \\(0,0,0\\) thread \\([0-9]+,0,0\\): load_matrix_sync: mptr " +
                     pointerText(shiftedIn.get() + 1) + " is not aligned to 32 bytes$",
                 cudaErrorMisalignedAddress);
  EXPECT_EQ(untouchedSums.download(), std::vector<float>(kTile * kTile, kUntouched));

  // 16 bytes off: aligned for a float4, not for a tile.
  DeviceBuffer<float> out(std::vector<float>(kTile * kTile + 4, kUntouched));
  launchWarp("storeOnes", [](auto... args) { storeOnes(args...); }, out.get() + 4, unsigned(kTile));
  expectOneFault("^block \\(0,0,0\\) thread \\([0-9]+,0,0\\): store_matrix_sync: mptr " +
                     pointerText(out.get() + 4) + " is not aligned to 32 bytes$",
                 cudaErrorMisalignedAddress);
  EXPECT_EQ(out.download(), std::vector<float>(kTile * kTile + 4, kUntouched));
}

TEST_F(WmmaTest, LeadingDimensionOffSixteenBytesIsAMisalignedAddressFault) {
  DeviceBuffer<__nv_bfloat16> in(std::vector<__nv_bfloat16>(kTile * 12, __float2bfloat16_rn(1.0f)));
  DeviceBuffer<float> sums(std::vector<float>(kTile * kTile, kUntouched));
  launchWarp(
      "rowSumsOfBfloat16Tile", [](auto... args) { rowSumsOfBfloat16Tile(args...); }, in.get(), 12u,
      sums.get());
  expectOneFault("^block \\(0,0,0\\) thread \\([0-9]+,0,0\\): load_matrix_sync: ldm 12 is not a "
                 "multiple of 8 elements of 2 bytes$",
                 cudaErrorMisalignedAddress);
  EXPECT_EQ(sums.download(), std::vector<float>(kTile * kTile, kUntouched));

  DeviceBuffer<float> out(std::vector<float>(kTile * 18, kUntouched));
  launchWarp("storeOnes", [](auto... args) { storeOnes(args...); }, out.get(), 18u);
  expectOneFault("^block \\(0,0,0\\) thread \\([0-9]+,0,0\\): store_matrix_sync: ldm 18 is not a "
                 "multiple of 4 elements of 4 bytes$",
                 cudaErrorMisalignedAddress);
  EXPECT_EQ(out.download(), std::vector<float>(kTile * 18, kUntouched));
}

// When the lower half calls, it waits forever once the upper half has exited; when the upper
// half calls, the lower half has already exited. Either is reported as the same divergence
// at a __syncwarp is.
TEST_F(WmmaTest, CollectiveCalledByHalfTheWarpIsReportedAsADivergedSyncwarp) {
  DeviceBuffer<float> tile(std::vector<float>(kTile * kTile, 1.0f));
  const auto reportOf = [&](Collective collective, bool upperHalf) {
    launchWarp(
        "halfWarpCalls", [](auto... args) { halfWarpCalls(args...); }, collective, upperHalf,
        tile.get());
    EXPECT_EQ(faultReports().size(), 1u);
    const std::string report = faultReports().empty() ? "" : faultReports()[0];
    clearDeviceFaults();
    return report;
  };
  const std::string lowerWaits = reportOf(Collective::SyncWarp, false),
                    upperMeetsExited = reportOf(Collective::SyncWarp, true);
  EXPECT_TRUE(std::regex_search(
      lowerWaits, std::regex("^kernel halfWarpCalls block \\(0,0,0\\): threads wait forever: "
                             "thread \\(0,0,0\\) in __syncwarp .*\\(16 of 32 threads exited\\)$")))
      << lowerWaits;
  EXPECT_EQ(upperMeetsExited, "kernel halfWarpCalls block (0,0,0) thread (16,0,0): __syncwarp: "
                              "lane 0 of the mask has already exited");
  for (Collective collective :
       {Collective::MmaSync, Collective::LoadMatrixSync, Collective::StoreMatrixSync}) {
    EXPECT_EQ(reportOf(collective, false), lowerWaits) << int(collective);
    EXPECT_EQ(reportOf(collective, true), upperMeetsExited) << int(collective);
  }
}

// The tile's accesses are the kernel's own, checked as its plain loads and stores are: a
// tile one element longer than its allocation is caught at that element.
TEST_F(WmmaTest, TileBeyondItsAllocationIsOutOfBounds) {
  DeviceBuffer<__nv_bfloat16> in(
      std::vector<__nv_bfloat16>(kTile * kTile - 1, __float2bfloat16_rn(1.0f)));
  DeviceBuffer<float> sums(std::vector<float>(kTile * kTile, kUntouched));
  launchWarp(
      "rowSumsOfBfloat16Tile", [](auto... args) { rowSumsOfBfloat16Tile(args...); }, in.get(),
      unsigned(kTile), sums.get());
  expectOneFault("^kernel rowSumsOfBfloat16Tile block \\(0,0,0\\) thread \\([0-9]+,0,0\\): "
                 "out-of-bounds read of 2 bytes at " +
                     pointerText(in.get() + kTile * kTile - 1),
                 cudaErrorLaunchFailure);

  // Element 255 is lane 31's to write.
  DeviceBuffer<float> out(std::vector<float>(kTile * kTile - 1, kUntouched));
  launchWarp("storeOnes", [](auto... args) { storeOnes(args...); }, out.get(), unsigned(kTile));
  expectOneFault("^kernel storeOnes block \\(0,0,0\\) thread \\(31,0,0\\): out-of-bounds write of "
                 "4 bytes at " +
                     pointerText(out.get() + kTile * kTile - 1),
                 cudaErrorLaunchFailure);
}

} // namespace
} // namespace bertc::sim::test
