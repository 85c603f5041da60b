// The checks of the WMMA loads and stores (mma.h) and of ldmatrix's row addresses
// (bertc/cuda_sim/warp_matrix.h), outside the kernel's instrumented code.
// A GPU accesses a tile in aligned pieces from mptr and from the start of each row (or
// column), ldm elements apart, so an mptr off 32 bytes or an ldm off 16 bytes makes an access
// misaligned: the device reports cudaErrorMisalignedAddress ("misaligned address";
// compute-sanitizer: "Address ... is misaligned"). cudaErrorInvalidValue is an API call's
// error, which no kernel raises.
#include "access_checks.h"
#include "runtime_errors.h"

#include "bertc/cuda_sim/faults.h"

#include "bertc/cuda_sim/warp_matrix.h"

#include <mma.h>

#include <sstream>

namespace bertc::sim {

namespace {
/// A misalignment report begins with the thread and the function.
void beginReport(std::ostringstream &report, const char *function) {
  const ThreadCoordinates &where = currentThread();
  report << "block (" << where.block.x << "," << where.block.y << "," << where.block.z
         << ") thread (" << where.thread.x << "," << where.thread.y << "," << where.thread.z
         << "): " << function << ": ";
}
} // namespace

bool wmmaTileAccessValid(const char *function, const void *mptr, unsigned ldm,
                         size_t elementBytes) {
  constexpr uintptr_t kPointerAlignment = 32, kLeadingAlignment = 16;
  const bool aligned = reinterpret_cast<uintptr_t>(mptr) % kPointerAlignment == 0;
  const bool ldmAligned = ldm * elementBytes % kLeadingAlignment == 0;
  if (stickyError() != cudaSuccess)
    return false;
  if (aligned && ldmAligned)
    return true;
  ChecksPaused paused; // the report's strings may use instrumented copies of library code
  std::ostringstream report;
  beginReport(report, function);
  if (!aligned)
    report << "mptr " << mptr << " is not aligned to " << kPointerAlignment << " bytes"
           << (ldmAligned ? "" : ", and ");
  if (!ldmAligned)
    report << "ldm " << ldm << " is not a multiple of " << kLeadingAlignment / elementBytes
           << " elements of " << elementBytes << " bytes";
  raiseDeviceFault(cudaErrorMisalignedAddress, report.str());
  return false;
}

bool matrixRowAligned(const char *function, const void *row) {
  constexpr uintptr_t kRowAlignment = 16;
  if (stickyError() != cudaSuccess)
    return false;
  if (reinterpret_cast<uintptr_t>(row) % kRowAlignment == 0)
    return true;
  ChecksPaused paused;
  std::ostringstream report;
  beginReport(report, function);
  report << "row address " << row << " is not aligned to " << kRowAlignment << " bytes";
  raiseDeviceFault(cudaErrorMisalignedAddress, report.str());
  return false;
}

} // namespace bertc::sim
