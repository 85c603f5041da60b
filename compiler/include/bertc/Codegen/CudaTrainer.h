//===- CudaTrainer.h - CUDA source of a trainer's step -----------*- C++ -*-===//
#pragma once

#include "bertc/abi/trainer.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace bertc {

/// Writes trainer.cu for a module planned for target cuda (with the cuBLASLt workspace,
/// PipelineOptions::gemmWorkspaceBytes, and @eval_step): its plan and CudaSteps, exported by
/// bertc_trainer() (bertc/abi/trainer.h), the steps launching the runtime's CUDA kernels
/// and cuBLASLt GEMMs at the planned arena offsets on one stream. Fails with a diagnostic
/// on an op it cannot emit.
mlir::LogicalResult emitCudaTrainer(mlir::ModuleOp module, const JobDataSettings &data,
                                    llvm::raw_ostream &os);

} // namespace bertc
