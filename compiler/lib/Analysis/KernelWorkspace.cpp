//===- KernelWorkspace.cpp - arena bytes the CUDA kernels need per op -----===//

#include "bertc/Analysis/KernelWorkspace.h"

#include "bert/BertDialect.h"
#include "bertc/Analysis/ArenaPacker.h"
#include "bertc/abi/kernel_workspace.h"
#include "bertc/abi/lm_head_loss.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

const int64_t kCudaGemmWorkspaceBytes = int64_t(cuda::kCudaWorkspaceBytes);

int64_t cudaOptimizerTablesBytes(func::FuncOp microStep) {
  auto module = microStep->getParentOfType<mlir::ModuleOp>();
  llvm::StringMap<int64_t> eightBit = eightBitStateBlocks(module);
  llvm::StringSet<> inBackward = updatesInBackward(module);
  int64_t chunks = 0;
  // The host's AdamW needs no device chunk table.
  for (ParamOp param :
       optimizerOnHost(module) ? SmallVector<ParamOp>{} : trainableParams(microStep))
    if (!eightBit.count(param.getName()) && !inBackward.contains(param.getName()))
      chunks += cuda::adamwChunkCount(param.getResult().getType().getNumElements());
  return int64_t(cuda::optimizerTables(chunks).bytes);
}

namespace {

/// Features (the last dimension) of a tensor.
int64_t features(Value value) { return cast<RankedTensorType>(value.getType()).getShape().back(); }

/// Rows of an LM head's [vocab, width] weight.
int64_t vocabOf(Value weight) { return cast<RankedTensorType>(weight.getType()).getShape()[0]; }

/// Rows of a [..., features] tensor at the plan's bounds.
int64_t boundedRows(Value value, DimBounds bounds) {
  SmallVector<int64_t> shape = boundedShape(cast<RankedTensorType>(value.getType()), bounds);
  int64_t rows = 1;
  for (int64_t dim : ArrayRef<int64_t>(shape).drop_back())
    rows *= dim;
  return rows;
}

} // namespace

int64_t kernelWorkspaceBytes(Operation *op, DimBounds bounds) {
  return llvm::TypeSwitch<Operation *, int64_t>(op)
      .Case([&](AttentionOp attention) {
        return cuda::attentionForwardWorkspaceBytes(attention.getHeadChunk(), bounds.maxBatch,
                                                    bounds.maxSeq);
      })
      .Case([&](AttentionGradOp grad) {
        return cuda::attentionBackwardWorkspaceBytes(
            grad.getHeadChunk(), bounds.maxBatch, grad.getHeads(), bounds.maxSeq,
            grad.getDropout().convertToFloat() > 0, grad.getGroupedHeadDim());
      })
      .Case([&](LayerNormOp ln) { return 2 * boundedRows(ln.getInput(), bounds) * 4; })
      .Case([&](AddLayerNormOp ln) { return 2 * boundedRows(ln.getSum(), bounds) * 4; })
      .Case<LayerNormGradOp, AccumulateLayerNormGradOp>([&](auto ln) {
        int64_t rows = boundedRows(ln.getInput(), bounds);
        return (2 * rows + cuda::layerNormBackwardWorkspaceFloats(rows, features(ln.getInput()))) *
               int64_t(sizeof(float));
      })
      // The CUDA RMSNorm backward's r of each row, between its row and column kernels.
      .Case([&](RmsNormGradOp grad) {
        return boundedRows(grad.getInput(), bounds) * int64_t(sizeof(float));
      })
      // The LM head loss's [token_chunk, vocab] logits block (and the forward's per-token
      // losses).
      .Case([&](LmHeadLossOp loss) {
        return lmHeadLossForwardWorkspaceBytes(loss.getTokenChunk(), vocabOf(loss.getWeight()),
                                               boundedRows(loss.getHidden(), bounds));
      })
      .Case([&](LmHeadLossGradOp grad) {
        return lmHeadLossBackwardWorkspaceBytes(grad.getTokenChunk(), vocabOf(grad.getWeight()));
      })
      .Case([&](AccumulateLmHeadLossGradOp grad) {
        return lmHeadLossBackwardWorkspaceBytes(grad.getTokenChunk(), vocabOf(grad.getParam()));
      })
      .Case<BiasGradOp, AccumulateBiasGradOp, GeluGradAccumulateBiasOp, DropoutGradAccumulateBiasOp,
            GeluGradBiasOp, DropoutGradBiasOp>([&](auto grad) {
        return cuda::biasBackwardWorkspaceFloats(boundedRows(grad.getResultGrad(), bounds),
                                                 features(grad.getResultGrad())) *
               int64_t(sizeof(float));
      })
      .Default([](Operation *) { return int64_t(0); });
}

int64_t cpuAttentionScratchBytes(func::FuncOp microStep, DimBounds bounds) {
  int64_t floats = 0;
  microStep.walk([&](AttentionOp op) {
    if (op.getHeadChunk() == 0)
      floats = std::max(floats, cpu::attentionScratchFloats(bounds.maxSeq, op.getGroupedHeadDim()));
  });
  return floats * int64_t(sizeof(float));
}

} // namespace bertc
