// Fibers for the simulated GPU threads: a stack and a saved stack pointer, switched by a
// few instructions (fiber_switch.S), so a block of 1024 threads that meet at a barrier
// costs a few nanoseconds per switch rather than a system call.
#pragma once

#include <cstddef>

namespace bertc::sim {

/// A fiber's stack: mapped with an inaccessible guard page below it, so an overflow
/// faults at once instead of corrupting the neighbouring stack.
class FiberStack {
public:
  static constexpr size_t kBytes = 128 * 1024;
  FiberStack();
  ~FiberStack();
  FiberStack(const FiberStack &) = delete;
  FiberStack &operator=(const FiberStack &) = delete;

  /// The initial stack pointer of a fiber that starts in entry(argument); entry must never
  /// return (it switches away for the last time instead).
  void *prepare(void (*entry)(void *), void *argument);

  /// The usable range of the stack (the guard page excluded).
  const void *low() const { return static_cast<const char *>(mapping_) + guardBytes_; }
  const void *high() const { return static_cast<const char *>(mapping_) + mappingBytes_; }

private:
  void *mapping_;
  size_t mappingBytes_, guardBytes_;
};

} // namespace bertc::sim

/// Saves the callee-saved registers on the current stack, stores the stack pointer in
/// *saveStackPointer and resumes the fiber whose saved stack pointer is `resume`.
extern "C" void bertc_sim_fiber_switch(void **saveStackPointer, void *resume);
