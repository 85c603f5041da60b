//===- StepLiveness.cpp - which tensors of a step are live when -----------===//

#include "bertc/Analysis/StepLiveness.h"

#include "bert/BertDialect.h"

using namespace mlir;

namespace bertc {

bool isPlannedActivation(Value value) {
  Operation *def = value.getDefiningOp();
  return def && !isa<bert::ParamOp, bert::InputOp, bert::OffloadOp>(def);
}

std::vector<TensorLife> activationLifetimes(Block &body, DimBounds bounds) {
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [index, op] : llvm::enumerate(body))
    position[&op] = int64_t(index);
  int64_t lastPosition = int64_t(position.size()) - 1;
  Operation *terminator = body.getTerminator();
  std::vector<TensorLife> lives;
  for (Operation &op : body) {
    for (Value result : op.getResults()) {
      if (!isPlannedActivation(result))
        continue;
      int64_t end = position[&op];
      for (Operation *user : result.getUsers())
        end = std::max(end, user == terminator ? lastPosition : position[user]);
      lives.push_back(
          {result,
           {position[&op], end, boundedBytes(cast<RankedTensorType>(result.getType()), bounds)}});
    }
  }
  return lives;
}

std::vector<StepBuffer> coalesceInPlace(const std::vector<TensorLife> &lives) {
  std::vector<StepBuffer> buffers;
  llvm::DenseMap<Value, size_t> bufferOf;
  for (const TensorLife &life : lives) {
    Operation *def = life.value.getDefiningOp();
    std::optional<size_t> reused;
    if (auto inPlace = dyn_cast<bert::InPlaceOpInterface>(def);
        inPlace && life.value == def->getResult(0)) {
      for (unsigned index : inPlace.getReusableOperands()) {
        auto found = bufferOf.find(def->getOperand(index));
        if (found == bufferOf.end())
          continue;
        StepBuffer &candidate = buffers[found->second];
        // The operand dies here (its buffer ends at this op) and is as large.
        if (candidate.interval.end == life.interval.begin &&
            candidate.interval.bytes == life.interval.bytes) {
          reused = found->second;
          break;
        }
      }
    }
    if (reused) {
      buffers[*reused].values.push_back(life.value);
      buffers[*reused].interval.end = life.interval.end;
      bufferOf[life.value] = *reused;
      continue;
    }
    bufferOf[life.value] = buffers.size();
    buffers.push_back({{life.value}, life.interval});
  }
  return buffers;
}

std::vector<LiveInterval> intervalsOf(const std::vector<StepBuffer> &buffers) {
  std::vector<LiveInterval> intervals;
  for (const StepBuffer &buffer : buffers)
    intervals.push_back(buffer.interval);
  return intervals;
}

} // namespace bertc
