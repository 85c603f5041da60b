// The check of ldmatrix's row addresses and the count of its shared-memory passes
// (bertc/cuda_sim/warp_matrix.h), outside the kernel's instrumented code. A GPU reads each row as
// one 16-byte access, so a row address off 16 bytes is misaligned: the device reports
// cudaErrorMisalignedAddress ("misaligned address"; compute-sanitizer: "Address ... is
// misaligned"). cudaErrorInvalidValue is an API call's error, which no kernel raises.
#include "access_checks.h"
#include "runtime_errors.h"

#include "bertc/cuda_sim/faults.h"
#include "bertc/cuda_sim/warp_matrix.h"

#include <algorithm>
#include <sstream>

namespace bertc::sim {

bool matrixRowAligned(const char *function, const void *row) {
  constexpr uintptr_t kRowAlignment = 16;
  if (stickyError() != cudaSuccess)
    return false;
  if (reinterpret_cast<uintptr_t>(row) % kRowAlignment == 0)
    return true;
  ChecksPaused paused; // the report's strings may use instrumented copies of library code
  const ThreadCoordinates &where = currentThread();
  std::ostringstream report;
  report << "block (" << where.block.x << "," << where.block.y << "," << where.block.z
         << ") thread (" << where.thread.x << "," << where.thread.y << "," << where.thread.z
         << "): " << function << ": row address " << row << " is not aligned to " << kRowAlignment
         << " bytes";
  raiseDeviceFault(cudaErrorMisalignedAddress, report.str());
  return false;
}

namespace {
MatrixLoadCounts counts; // blocks run one at a time, on one host thread
} // namespace

MatrixLoadCounts matrixLoadCounts() { return counts; }

void resetMatrixLoadCounts() { counts = {}; }

void countMatrixLoad(const uint16_t *const (&rows)[32]) {
  // A group's place among the 8 is the same relative to the shared window as to the host's
  // addresses up to a rotation, which leaves the counts as they are.
  constexpr uintptr_t kRowBytes = 16, kRowGroups = 8; // 32 banks of 4 bytes
  for (int matrix = 0; matrix < 4; ++matrix) {
    const uint16_t *const *first = rows + 8 * matrix;
    int rowsInGroup[kRowGroups] = {};
    for (int row = 0; row < 8; ++row)
      if (std::find(first, first + row, first[row]) == first + row) // a new address
        ++rowsInGroup[reinterpret_cast<uintptr_t>(first[row]) / kRowBytes % kRowGroups];
    ++counts.matrices;
    counts.bankConflicts += uint64_t(*std::max_element(rowsInGroup, rowsInGroup + kRowGroups) - 1);
  }
}

} // namespace bertc::sim
