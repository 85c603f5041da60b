// FiberStack (fiber.h).
#include "fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <new>

extern "C" void bertc_sim_fiber_start();

namespace bertc::sim {

FiberStack::FiberStack() {
  guardBytes_ = size_t(::sysconf(_SC_PAGESIZE));
  mappingBytes_ = kBytes + guardBytes_;
  mapping_ = ::mmap(nullptr, mappingBytes_, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping_ == MAP_FAILED)
    throw std::bad_alloc();
  ::mprotect(mapping_, guardBytes_, PROT_NONE);
}

FiberStack::~FiberStack() { ::munmap(mapping_, mappingBytes_); }

void *FiberStack::prepare(void (*entry)(void *), void *argument) {
  // From the top: 16 bytes of padding, the return address of the first switch, then the
  // six registers it pops (r15 lowest). After its `ret` the stack pointer is 16-byte
  // aligned, as bertc_sim_fiber_start's call needs.
  auto top = (reinterpret_cast<uintptr_t>(mapping_) + mappingBytes_) & ~uintptr_t(15);
  auto *slots = reinterpret_cast<uintptr_t *>(top - 16) - 7;
  slots[6] = reinterpret_cast<uintptr_t>(&bertc_sim_fiber_start);
  slots[5] = 0;                                     // rbp
  slots[4] = 0;                                     // rbx
  slots[3] = reinterpret_cast<uintptr_t>(argument); // r12
  slots[2] = reinterpret_cast<uintptr_t>(entry);    // r13
  slots[1] = 0;                                     // r14
  slots[0] = 0;                                     // r15
  return slots;
}

} // namespace bertc::sim
