// The 16-bit working copies of the parameters (mixed_precision.h).
#include "mixed_precision.h"

#include "bertc/runtime/cpu_kernels.h"

namespace bertc {

void writeWorkingCopies(const TrainerPlan &plan, std::byte *arena) {
  for (size_t p = 0; p < plan.numParams; ++p) {
    const ParamSlot &param = plan.params[p];
    if (param.workingCopyOnly)
      continue; // written when its values were
    const auto *master = reinterpret_cast<const float *>(arena + param.masterOffset);
    if (param.storage == StorageType::BF16)
      cpu::convert(master, reinterpret_cast<bf16 *>(arena + param.offset), param.numel);
    else if (param.storage == StorageType::F16)
      cpu::convert(master, reinterpret_cast<fp16 *>(arena + param.offset), param.numel);
  }
}

} // namespace bertc
