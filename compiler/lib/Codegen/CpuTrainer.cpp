//===- CpuTrainer.cpp - C++ source of a CPU trainer -----------------------===//
//
// Emits, for a planned module:
// 1. the parameter table (HF name, shape, value/gradient/moment slots, init);
// 2. kTrainerPlan: arena size, regions, input slots and the [train] settings;
// 3. bertcMicroStep and bertcOptimizerStep: each op of the step functions becomes a
//    kernel call on pointers declared at the op's arena offsets, in program order;
// 4. bertcEvalStep: the micro-step's forward with dropout off (EvalStep.h), which copies
//    its logits out as fp32.
//
//===----------------------------------------------------------------------===//

#include "bertc/Codegen/CpuTrainer.h"

#include "EmitContext.h"
#include "EvalStep.h"
#include "bert/BertDialect.h"
#include "bertc/Analysis/StepLiveness.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// A C++ string literal of `text` ("" for a null attribute).
std::string cppString(StringAttr text) {
  std::string quoted = "\"";
  for (char c : text ? text.getValue() : StringRef()) {
    if (c == '\n') {
      quoted += "\\n";
      continue;
    }
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

/// Reads `bert.train` settings as C++ literals for the plan's initialiser.
class TrainLiterals {
public:
  explicit TrainLiterals(ModuleOp module)
      : train(module->getAttrOfType<DictionaryAttr>("bert.train")) {}

  bool valid() const { return bool(train); }

  int64_t integer(StringRef key) const {
    if (auto attr = dyn_cast_or_null<IntegerAttr>(train.get(key)))
      return attr.getInt();
    return 0;
  }
  std::string real(StringRef key) const {
    auto attr = dyn_cast_or_null<FloatAttr>(train.get(key));
    return EmitContext::floatLiteral(attr ? float(attr.getValueAsDouble()) : 0.0f);
  }
  bool boolean(StringRef key) const {
    auto attr = dyn_cast_or_null<BoolAttr>(train.get(key));
    return attr && attr.getValue();
  }
  std::string text(StringRef key) const {
    return cppString(dyn_cast_or_null<StringAttr>(train.get(key)));
  }
private:
  DictionaryAttr train;
};

/// A region of `bert.plan` as a C++ ArenaRegion initialiser.
std::string regionLiteral(ModuleOp module, StringRef key) {
  ArenaRange region = getPlanRegion(module, key);
  return "{" + std::to_string(region.offset) + ", " + std::to_string(region.bytes) + "}";
}

/// The TaskKind enumerator of `bert.train`'s task.
std::string taskKind(StringRef task) {
  if (task == "\"regression\"")
    return "TaskKind::Regression";
  if (task == "\"span\"")
    return "TaskKind::Span";
  if (task == "\"token-classification\"")
    return "TaskKind::TokenClassification";
  return "TaskKind::Classification";
}

std::string initKind(StringRef init) {
  if (init == "zeros")
    return "ParamInit::Zeros";
  if (init == "ones")
    return "ParamInit::Ones";
  return "ParamInit::Normal";
}

int64_t slotOrZero(ParamOp param, StringRef slot) {
  auto attr = param->getAttrOfType<IntegerAttr>(slot);
  return attr ? attr.getInt() : 0;
}

/// The StorageType enumerator of a parameter's element type.
std::string storageKind(Type elementType) {
  if (elementType.isBF16())
    return "StorageType::BF16";
  if (elementType.isF16())
    return "StorageType::F16";
  return "StorageType::F32";
}

void emitParamTable(func::FuncOp microStep, raw_ostream &os) {
  os << "const ParamSlot kParams[] = {\n";
  microStep.walk([&](ParamOp param) {
    auto shape = param.getResult().getType().getShape();
    os << "    {\"" << param.getName() << "\", " << shape.size() << ", {";
    llvm::interleaveComma(shape, os);
    os << "}, " << param.getResult().getType().getNumElements() << ", "
       << slotOrZero(param, "arena.value") << ", " << (param.getTrainable() ? "true" : "false")
       << ", " << slotOrZero(param, "arena.grad") << ", " << slotOrZero(param, "arena.adam_m")
       << ", " << slotOrZero(param, "arena.adam_v") << ", "
       << (param.getDecay() ? "true" : "false") << ", " << initKind(param.getInit()) << ", "
       << storageKind(param.getResult().getType().getElementType()) << ", "
       << slotOrZero(param, "arena.master") << "},\n";
  });
  os << "};\n\n";
}

/// Whether the backward's seed carries the fp16 loss scale (-bertc-mixed-precision).
bool usesLossScaling(ModuleOp module) {
  bool scaled = false;
  module.walk([&](FillOp fill) { scaled |= fill.getLossScaled(); });
  return scaled;
}

/// The offset of input `name`, or failure when @micro_step reads no such input.
FailureOr<int64_t> inputOffset(func::FuncOp microStep, StringRef name) {
  int64_t offset = -1;
  microStep.walk([&](InputOp input) {
    if (input.getName() == name)
      if (auto attr = input->getAttrOfType<DenseI64ArrayAttr>("arena.offsets"))
        offset = attr[0];
  });
  if (offset < 0)
    return microStep.emitError() << "@micro_step reads no planned input '" << name << "'";
  return offset;
}

LogicalResult emitPlan(ModuleOp module, func::FuncOp microStep, raw_ostream &os) {
  TrainLiterals s(module);
  FailureOr<DimBounds> bounds = getDimBounds(module);
  if (!s.valid() || !module->hasAttr("bert.plan") || failed(bounds))
    return module.emitError("module has no 'bert.train'/'bert.plan': run the pipeline first");
  SmallVector<int64_t> inputs;
  for (StringRef name :
       {"input_ids", "token_type_ids", "position_ids", "attention_mask", "labels"}) {
    FailureOr<int64_t> offset = inputOffset(microStep, name);
    if (failed(offset))
      return failure();
    inputs.push_back(*offset);
  }
  os << "} // namespace\n\n"
     << "const TrainerPlan kTrainerPlan = {\n"
     << "    .arenaBytes = " << getPlanInteger(module, "arena_bytes") << ",\n"
     << "    .params = kParams,\n"
     << "    .numParams = sizeof(kParams) / sizeof(kParams[0]),\n"
     << "    .parameters = " << regionLiteral(module, "parameters") << ",\n"
     << "    .gradients = " << regionLiteral(module, "gradients") << ",\n"
     << "    .optimizerState = " << regionLiteral(module, "optimizer_state") << ",\n"
     << "    .scratch = " << regionLiteral(module, "scratch") << ",\n"
     << "    .inputs = {" << inputs[0] << ", " << inputs[1] << ", " << inputs[2] << ", "
     << inputs[3] << ", " << inputs[4] << ", " << getPlanInteger(module, "loss") << "},\n"
     << "    .train = {\n"
     << "        .batch = " << s.integer("batch") << ",\n"
     << "        .microBatch = " << bounds->maxBatch << ",\n"
     << "        .accumulation = " << accumulationSteps(module, *bounds) << ",\n"
     << "        .seqLen = " << bounds->maxSeq << ",\n"
     << "        .epochs = " << s.integer("epochs") << ",\n"
     << "        .steps = " << s.integer("steps") << ",\n"
     << "        .lr = " << s.real("lr") << ",\n"
     << "        .weightDecay = " << s.real("weight_decay") << ",\n"
     << "        .beta1 = " << s.real("beta1") << ",\n"
     << "        .beta2 = " << s.real("beta2") << ",\n"
     << "        .eps = " << s.real("adam_eps") << ",\n"
     << "        .schedule = "
     << (s.text("schedule") == "\"constant\"" ? "LrSchedule::Constant" : "LrSchedule::Linear")
     << ",\n"
     << "        .warmup = " << s.real("warmup") << ",\n"
     << "        .seed = " << s.integer("seed") << "u,\n"
     << "        .shuffle = " << (s.boolean("shuffle") ? "true" : "false") << ",\n"
     << "        .numLabels = " << s.integer("num_labels") << ",\n"
     << "        .initializerRange = " << s.real("initializer_range") << ",\n"
     << "        .vocab = " << s.integer("vocab") << ",\n"
     << "        .typeVocab = " << s.integer("type_vocab") << ",\n"
     << "        .trainData = " << s.text("train_data") << ",\n"
     << "        .initCheckpoint = " << s.text("init_checkpoint") << ",\n"
     << "        .vocabFile = " << s.text("vocab_file") << ",\n"
     << "        .groupByLength = " << (s.boolean("group_by_length") ? "true" : "false")
     << ",\n"
     << "        .textField = " << s.text("text_field") << ",\n"
     << "        .textPairField = " << s.text("text_pair_field") << ",\n"
     << "        .labelField = " << s.text("label_field") << ",\n"
     << "        .task = " << taskKind(s.text("task")) << ",\n"
     << "        .evalData = " << s.text("eval_data") << ",\n"
     << "    },\n"
     << "    .hfConfigJson = " << cppString(module->getAttrOfType<StringAttr>("bert.hf_config"))
     << ",\n"
     << "    .masterWeights = " << regionLiteral(module, "master_weights") << ",\n"
     << "    .lossScaling = " << (usesLossScaling(module) ? "true" : "false") << ",\n"
     << "};\n\n";
  return success();
}

/// The arena offset of an op result, -1 for parameters and inputs.
int64_t arenaOffset(Value value) {
  auto result = dyn_cast<OpResult>(value);
  auto offsets = result ? result.getOwner()->getAttrOfType<DenseI64ArrayAttr>("arena.offsets")
                        : nullptr;
  return offsets && isPlannedActivation(value) ? offsets[result.getResultNumber()] : -1;
}

/// The last op of `block` that uses each planned activation (its definer if none).
llvm::DenseMap<Value, Operation *> lastUsers(Block &block) {
  llvm::DenseMap<Value, Operation *> last;
  for (Operation &op : block) {
    for (Value result : op.getResults())
      if (isPlannedActivation(result))
        last[result] = &op;
    for (Value operand : op.getOperands())
      if (isPlannedActivation(operand))
        last[operand] = &op;
  }
  return last;
}

/// Plan-check hooks around one op's kernel calls: its planned operands are read-checked
/// before, its results defined after, and the tensors it used last released.
void emitPlanCheckReads(Operation &op, const EmitContext &ctx, raw_ostream &os) {
  for (Value operand : op.getOperands())
    if (isPlannedActivation(operand))
      os << "  planCheckRead(ctx, " << ctx.name(operand) << ", " << EmitContext::bytes(operand)
         << ", " << ctx.id(operand) << ", \"" << op.getName() << "\", \""
         << ctx.describe(operand) << "\");\n";
}

void emitPlanCheckUpdates(Operation &op, const EmitContext &ctx, ValueRange keepAlive,
                          const llvm::DenseMap<Value, Operation *> &last, raw_ostream &os) {
  for (Value result : op.getResults())
    os << "  planCheckDefine(ctx, " << ctx.name(result) << ", " << EmitContext::bytes(result)
       << ", " << ctx.id(result) << ");\n";
  llvm::SmallPtrSet<Value, 4> released;
  auto release = [&](Value value) {
    if (llvm::is_contained(keepAlive, value) || last.lookup(value) != &op ||
        !released.insert(value).second)
      return;
    os << "  planCheckRelease(ctx, " << ctx.name(value) << ", " << EmitContext::bytes(value)
       << ", " << ctx.id(value) << ");\n";
  };
  // An in-place result took over its dying operand's bytes: they are not released.
  auto takenOver = [&](Value operand) {
    return llvm::any_of(op.getResults(),
                        [&](Value result) { return arenaOffset(result) == arenaOffset(operand); });
  };
  for (Value operand : op.getOperands())
    if (isPlannedActivation(operand) && !takenOver(operand))
      release(operand);
  for (Value result : op.getResults())
    release(result);
}

/// The body of a step function: pointers declared as their values are defined, then the
/// call. The values the function returns stay owned to its end.
LogicalResult emitStepBody(func::FuncOp func, EmitContext &ctx, raw_ostream &os) {
  os << "  std::byte *arena = ctx.arena;\n"
     << "  [[maybe_unused]] const int64_t B = ctx.batch, S = ctx.seq;\n";
  Block &body = func.getBody().front();
  llvm::DenseMap<Value, Operation *> last = lastUsers(body);
  ValueRange returned = body.getTerminator()->getOperands();
  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op))
      continue;
    if (failed(ctx.declareResults(&op)))
      return failure();
    if (isa<ParamOp, InputOp>(op))
      continue;
    emitPlanCheckReads(op, ctx, os);
    if (failed(emitGemmOp(&op, ctx)) && failed(emitAttentionOp(&op, ctx)) &&
        failed(emitPointwiseOp(&op, ctx)) && failed(emitLossOptimizerOp(&op, ctx)))
      return op.emitError("the cpu target has no kernel for this op");
    emitPlanCheckUpdates(op, ctx, returned, last, os);
  }
  return success();
}

/// One step function `void cppName(const StepContext &ctx)`.
LogicalResult emitStepFunction(func::FuncOp func, StringRef cppName, raw_ostream &os) {
  os << "void " << cppName << "(const StepContext &ctx) {\n";
  EmitContext ctx(os);
  if (failed(emitStepBody(func, ctx, os)))
    return failure();
  os << "}\n\n";
  return success();
}

/// bertcEvalStep: the forward of `microStep` with dropout off, then its logits (the eval
/// step's second result) copied out as fp32.
LogicalResult emitEvalStep(func::FuncOp microStep, raw_ostream &os) {
  FailureOr<OwningOpRef<func::FuncOp>> eval = buildEvalStep(microStep);
  if (failed(eval))
    return failure();
  os << "void bertcEvalStep(const StepContext &ctx, float *logits) {\n";
  EmitContext ctx(os);
  if (failed(emitStepBody(**eval, ctx, os)))
    return failure();
  Value logits = (**eval).getBody().front().getTerminator()->getOperand(1);
  os << "  planCheckRead(ctx, " << ctx.name(logits) << ", " << EmitContext::bytes(logits)
     << ", " << ctx.id(logits) << ", \"bertcEvalStep\", \"" << ctx.describe(logits)
     << "\");\n"
     << "  for (int64_t i = 0; i < " << EmitContext::numel(logits) << "; ++i)\n"
     << "    logits[i] = float(" << ctx.name(logits) << "[i]);\n"
     << "}\n\n";
  return success();
}

} // namespace

LogicalResult emitCpuTrainer(ModuleOp module, raw_ostream &os) {
  FailureOr<func::FuncOp> microStep = getMicroStep(module);
  if (failed(microStep))
    return failure();
  auto optimizerStep = module.lookupSymbol<func::FuncOp>(kOptimizerStep);
  if (!optimizerStep)
    return module.emitError("module has no @optimizer_step: run -bertc-insert-optimizer");

  os << "// Generated by bertc: a CPU trainer. Every pointer below is a slot of the one\n"
     << "// arena the runtime allocates; offsets come from the memory plan.\n"
     << "#include \"bertc/runtime/cpu_kernels.h\"\n"
     << "#include \"bertc/runtime/plan_check.h\"\n"
     << "#include \"bertc/runtime/trainer_plan.h\"\n\n"
     << "using namespace bertc;\n\n"
     << "namespace {\n\n";
  emitParamTable(*microStep, os);
  if (failed(emitPlan(module, *microStep, os)) ||
      failed(emitStepFunction(*microStep, "bertcMicroStep", os)) ||
      failed(emitStepFunction(optimizerStep, "bertcOptimizerStep", os)) ||
      failed(emitEvalStep(*microStep, os)))
    return failure();
  return success();
}

} // namespace bertc
