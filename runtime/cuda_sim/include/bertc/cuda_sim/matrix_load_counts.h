// What the simulated device's ldmatrix loads (bertc/cuda_sim/warp_matrix.h) cost in shared
// memory, for tests that hold kernels to loads without bank conflicts.
#pragma once

#include <cstdint>

namespace bertc::sim {

/// What the ldmatrix loads since the last resetMatrixLoadCounts() cost in shared memory, as
/// a GPU's 32 banks of 4 bytes serve them: an 8 x 8 matrix takes one pass (wavefront) when
/// its 8 row addresses fall in distinct 16-byte groups of banks (address / 16 % 8; rows at
/// one address are read once), and one more pass for each further row in the fullest group.
/// A bank conflict is such a pass beyond the first (as Nsight Compute counts them).
struct MatrixLoadCounts {
  uint64_t matrices = 0;      ///< 8 x 8 matrices loaded, four per ldmatrix .x4
  uint64_t bankConflicts = 0; ///< passes beyond one per matrix
};
MatrixLoadCounts matrixLoadCounts();
void resetMatrixLoadCounts();

} // namespace bertc::sim
