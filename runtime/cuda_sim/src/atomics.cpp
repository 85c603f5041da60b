// The simulated device's atomics (device_code.h): plain read-modify-writes, which no other
// thread can interleave (the blocks run one after another, and a thread is switched only
// in a collective). Compiled without the checkers' instrumentation, so that only the bounds
// are checked (checkAtomicAccess), not the race of blocks updating one word.
#include "access_checks.h"

namespace bertc::sim {

unsigned atomicAddWord(unsigned *address, unsigned value) {
  checkAtomicAccess(address, sizeof *address);
  const unsigned old = *address;
  *address = old + value;
  return old;
}

unsigned atomicExchangeWord(unsigned *address, unsigned value) {
  checkAtomicAccess(address, sizeof *address);
  const unsigned old = *address;
  *address = value;
  return old;
}

} // namespace bertc::sim
