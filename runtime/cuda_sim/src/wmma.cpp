// The checks of the WMMA loads and stores (mma.h), outside the kernel's instrumented code.
// A GPU accesses a tile in aligned pieces from mptr and from the start of each row (or
// column), ldm elements apart, so an mptr off 32 bytes or an ldm off 16 bytes makes an access
// misaligned: the device reports cudaErrorMisalignedAddress ("misaligned address";
// compute-sanitizer: "Address ... is misaligned"). cudaErrorInvalidValue is an API call's
// error, which no kernel raises.
#include "access_checks.h"
#include "runtime_errors.h"

#include "bertc/cuda_sim/faults.h"

#include <mma.h>

#include <sstream>

namespace bertc::sim {

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
  const ThreadCoordinates &where = currentThread();
  std::ostringstream report;
  report << "block (" << where.block.x << "," << where.block.y << "," << where.block.z
         << ") thread (" << where.thread.x << "," << where.thread.y << "," << where.thread.z
         << "): " << function << ": ";
  if (!aligned)
    report << "mptr " << mptr << " is not aligned to " << kPointerAlignment << " bytes"
           << (ldmAligned ? "" : ", and ");
  if (!ldmAligned)
    report << "ldm " << ldm << " is not a multiple of " << kLeadingAlignment / elementBytes
           << " elements of " << elementBytes << " bytes";
  raiseDeviceFault(cudaErrorMisalignedAddress, report.str());
  return false;
}

} // namespace bertc::sim
