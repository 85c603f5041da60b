// Plan-check mode (trainer --plan-check): a shadow of the arena that records which tensor
// owns each pair of bytes. Generated step functions report each tensor they write, each
// read, and each tensor's death (its bytes are then poisoned with NaN). A read of bytes
// that died, or that another tensor took over while this one was live, stops the run
// with the op and tensor named: the memory plan is checked on every step it runs.
#pragma once

#include "bertc/abi/trainer.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace bertc {

/// A read the plan did not allow: the message names the op, the tensor and its bytes.
struct PlanCheckError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class PlanChecker {
public:
  PlanChecker(const std::byte *arena, size_t arenaBytes);

  /// `tensor` (a generated-code id; `name`, its slot's name, a string literal) now owns
  /// [data, data + bytes).
  void define(const void *data, size_t bytes, int32_t tensor, const char *name);
  /// `tensor` died: its bytes are poisoned (all bits set: NaN) and owned by nobody.
  void release(void *data, size_t bytes, int32_t tensor);
  /// `op` reads `tensor` (described by `what`): throws PlanCheckError unless every byte
  /// still belongs to it.
  void read(const void *data, size_t bytes, int32_t tensor, const char *op, const char *what) const;

private:
  static constexpr int32_t kNobody = -1;
  size_t granule(const void *data) const;

  const std::byte *arena;
  std::vector<int32_t> owners;     ///< one per 2-byte granule of the arena
  std::vector<const char *> names; ///< by tensor id
};

/// The hooks generated step functions call; each does nothing without --plan-check.
inline void planCheckDefine(const StepContext &ctx, const void *data, size_t bytes, int32_t tensor,
                            const char *name) {
  if (ctx.planCheck)
    ctx.planCheck->define(data, bytes, tensor, name);
}
inline void planCheckRelease(const StepContext &ctx, void *data, size_t bytes, int32_t tensor) {
  if (ctx.planCheck)
    ctx.planCheck->release(data, bytes, tensor);
}
inline void planCheckRead(const StepContext &ctx, const void *data, size_t bytes, int32_t tensor,
                          const char *op, const char *what) {
  if (ctx.planCheck)
    ctx.planCheck->read(data, bytes, tensor, op, what);
}

} // namespace bertc
