// The simulated device's stand-in for CUDA's mma.h: the warp matrix functions (nvcuda::wmma)
// for 16x16x16 tiles of __half or __nv_bfloat16 with a float accumulator.
// On a GPU a fragment's elements are spread over the warp's 32 lanes in an unspecified
// mapping, so code may only apply one elementwise operation to every x[i]. Here every lane's
// fragment has room for the whole tile (num_elements = 256, x[] in the tile's row-major
// order), so such code computes what it computes on a GPU. Each lane holds what a lane
// holds there, a share: an accumulator's element e is lane e % 32's (the lane computes it
// in mma_sync, a 32nd of the product, and stores it), and a lane loads only what its
// elements need: their 8 rows of matrix_a (every other row) and their column of matrix_b.
// The lanes' shares cover every tile, so the checkers see each element of it accessed.
// The other elements of a lane's fragment hold whatever it last filled there, and no
// operation reads them.
// load_matrix_sync, store_matrix_sync and mma_sync are warp collectives: each begins with the
// warp's __syncwarp, so a warp whose lanes do not all call it is reported as a diverged
// __syncwarp. That __syncwarp also orders the lanes' shared-memory accesses for the race
// checker, which CUDA does not promise of these functions: a kernel still needs its own
// __syncwarp between lanes' stores and a load that reads them (the checker cannot tell).
// These inline functions are compiled with the kernel, so the checkers see their accesses
// as the kernel's own.
#pragma once

#include "bertc/cuda_sim/device_code.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <type_traits>

namespace bertc::sim {

/// Checks a WMMA load's or store's mptr (32-byte aligned) and ldm (a multiple of 16 bytes),
/// as CUDA's documentation requires, and returns whether the tile may be accessed. A
/// violation faults the device with cudaErrorMisalignedAddress, naming `function` and the
/// offending value. A fault ends the kernel on a GPU; here its threads run on, so once the
/// device has faulted the check fails without a new report (src/wmma.cpp).
bool wmmaTileAccessValid(const char *function, const void *mptr, unsigned ldm, size_t elementBytes);

} // namespace bertc::sim

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

namespace detail {
constexpr int kTile = 16;
template <typename T>
constexpr bool isMultiplicand = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <typename Layout>
constexpr bool isLayout = std::is_same_v<Layout, row_major> || std::is_same_v<Layout, col_major>;

inline float toFloat(__half value) { return __half2float(value); }
inline float toFloat(__nv_bfloat16 value) { return __bfloat162float(value); }

/// Where tile element (row, column) lies in memory of leading dimension ldm.
inline size_t offset(int row, int column, unsigned ldm, bool rowMajor) {
  return rowMajor ? size_t(row) * ldm + size_t(column) : size_t(column) * ldm + size_t(row);
}

/// The calling thread's lane: its index in the block, modulo the warp size.
inline unsigned lane() {
  return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % warpSize;
}

/// Whether the calling lane's accumulator elements (e % 32 == lane) need element (row,
/// column) of a matrix_a (its rows) or a matrix_b (its column) tile.
template <typename Use> inline bool laneNeeds(unsigned lane, int row, int column) {
  if constexpr (std::is_same_v<Use, matrix_a>)
    return unsigned(row % 2) == lane / kTile;
  else
    return unsigned(column) == lane % kTile;
}
} // namespace detail

/// A warp's 16x16 tile: matrix_a is M x K, matrix_b is K x N (each of __half or __nv_bfloat16
/// and lying row_major or col_major in memory), the accumulator is M x N of float.
template <typename Use, int m, int n, int k, typename T, typename Layout = void> class fragment {
  static_assert(m == 16 && n == 16 && k == 16,
                "wmma on the simulated device: only the m16n16k16 shape is supported");
  static_assert(std::is_same_v<Use, matrix_a> || std::is_same_v<Use, matrix_b> ||
                    std::is_same_v<Use, accumulator>,
                "wmma: a fragment's Use is matrix_a, matrix_b or accumulator");
  static_assert(std::is_same_v<Use, accumulator> || detail::isMultiplicand<T>,
                "wmma on the simulated device: matrix_a and matrix_b hold __half or __nv_bfloat16");
  static_assert(std::is_same_v<Use, accumulator> || detail::isLayout<Layout>,
                "wmma: matrix_a and matrix_b take a Layout, row_major or col_major");
  static_assert(!std::is_same_v<Use, accumulator> || std::is_same_v<T, float>,
                "wmma on the simulated device: the accumulator holds float");
  static_assert(!std::is_same_v<Use, accumulator> || std::is_void_v<Layout>,
                "wmma: the accumulator takes no Layout (its loads and stores take a layout_t)");

public:
  using element_type = T;
  static constexpr int num_elements = detail::kTile * detail::kTile;
  element_type x[num_elements];
};

/// Sets every element to `v`; not a collective.
template <typename Use, int m, int n, int k, typename T, typename Layout>
inline void fill_fragment(fragment<Use, m, n, k, T, Layout> &a,
                          const typename fragment<Use, m, n, k, T, Layout>::element_type &v) {
  for (auto &element : a.x)
    element = v;
}

/// Loads the calling lane's share of matrix_a or matrix_b from mptr, whose rows (row_major)
/// or columns (col_major) lie ldm elements apart.
template <typename Use, int m, int n, int k, typename T, typename Layout>
inline void load_matrix_sync(fragment<Use, m, n, k, T, Layout> &a, const T *mptr, unsigned ldm) {
  static_assert(!std::is_same_v<Use, accumulator>,
                "wmma: load_matrix_sync of an accumulator takes a layout_t");
  bertc::sim::syncWarp(0xffffffffu);
  if (!bertc::sim::wmmaTileAccessValid("load_matrix_sync", mptr, ldm, sizeof(T)))
    return;
  const bool rowMajor = std::is_same_v<Layout, row_major>;
  const unsigned lane = detail::lane();
  for (int row = 0; row < detail::kTile; ++row)
    for (int column = 0; column < detail::kTile; ++column)
      if (detail::laneNeeds<Use>(lane, row, column))
        a.x[row * detail::kTile + column] = mptr[detail::offset(row, column, ldm, rowMajor)];
}

/// Loads the calling lane's elements of the accumulator from mptr, lying as `layout` says
/// with leading dimension ldm.
inline void load_matrix_sync(fragment<accumulator, 16, 16, 16, float> &a, const float *mptr,
                             unsigned ldm, layout_t layout) {
  bertc::sim::syncWarp(0xffffffffu);
  if (!bertc::sim::wmmaTileAccessValid("load_matrix_sync", mptr, ldm, sizeof(float)))
    return;
  for (int element = int(detail::lane()); element < a.num_elements; element += warpSize)
    a.x[element] = mptr[detail::offset(element / detail::kTile, element % detail::kTile, ldm,
                                       layout == mem_row_major)];
}

/// Stores the accumulator to mptr, lying as `layout` says with leading dimension ldm; lane l
/// writes the elements e with e % 32 == l.
inline void store_matrix_sync(float *mptr, const fragment<accumulator, 16, 16, 16, float> &a,
                              unsigned ldm, layout_t layout) {
  bertc::sim::syncWarp(0xffffffffu);
  if (!bertc::sim::wmmaTileAccessValid("store_matrix_sync", mptr, ldm, sizeof(float)))
    return;
  for (int element = int(detail::lane()); element < a.num_elements; element += warpSize)
    mptr[detail::offset(element / detail::kTile, element % detail::kTile, ldm,
                        layout == mem_row_major)] = a.x[element];
}

/// d = a * b + c for the calling lane's elements of d (e % 32 == lane: one column, every
/// other row): the 16-bit inputs widened to float (so each product is exact) and each
/// element summed in float from c's, one rounding per add, in k order. d may be c: each
/// element of c is read only for the same element of d, before it is written. It touches
/// only fragments (registers on a GPU), so it is left out of the checkers' instrumentation,
/// which would make it about ten times slower.
template <typename T, typename LayoutA, typename LayoutB>
__attribute__((no_sanitize("kernel-address"))) inline void
mma_sync(fragment<accumulator, 16, 16, 16, float> &d,
         const fragment<matrix_a, 16, 16, 16, T, LayoutA> &a,
         const fragment<matrix_b, 16, 16, 16, T, LayoutB> &b,
         const fragment<accumulator, 16, 16, 16, float> &c) {
  bertc::sim::syncWarp(0xffffffffu);
  constexpr int tile = detail::kTile;
  const int lane = int(detail::lane());
  const int column = lane % tile;
  float bColumn[tile];
  for (int inner = 0; inner < tile; ++inner)
    bColumn[inner] = detail::toFloat(b.x[inner * tile + column]);
  for (int element = lane; element < tile * tile; element += warpSize) {
    const int row = element / tile;
    float sum = c.x[element];
    for (int inner = 0; inner < tile; ++inner)
      sum += detail::toFloat(a.x[row * tile + inner]) * bColumn[inner];
    d.x[element] = sum;
  }
}

} // namespace nvcuda::wmma
