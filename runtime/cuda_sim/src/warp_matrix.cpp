// The check of ldmatrix's row addresses (bertc/cuda_sim/warp_matrix.h), outside the kernel's
// instrumented code. A GPU reads each row as one 16-byte access, so a row address off 16
// bytes is misaligned: the device reports cudaErrorMisalignedAddress ("misaligned address";
// compute-sanitizer: "Address ... is misaligned"). cudaErrorInvalidValue is an API call's
// error, which no kernel raises.
#include "access_checks.h"
#include "runtime_errors.h"

#include "bertc/cuda_sim/faults.h"
#include "bertc/cuda_sim/warp_matrix.h"

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

} // namespace bertc::sim
