//===- LoraAdapter.cpp - LoRA adapters on the model's linear layers -------===//
//
// PEFT's lora.Linear: beside a frozen layer y = W x + b, the trained low-rank path
//   y + lora_B(lora_A(dropout(x))) * scaling
// with lora_A [r, in] (Kaiming-uniform, as PEFT's init_lora_weights = True), lora_B
// [out, r] (zeros: the adapter starts as the identity) and scaling alpha / r (alpha /
// sqrt(r) with use_rslora). A layer is adapted when a [lora] target is its name or the
// last parts of it ("q_proj", "self_attn.q_proj"), or the target is "all-linear"; the
// task head's layers train whole instead (PEFT's modules_to_save) and the LM head stays
// frozen.
//
//===----------------------------------------------------------------------===//

#include "ForwardBuilder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace bertc {
namespace {

/// The groups of the task heads' and the LM head's parameters.
bool isHeadGroup(StringRef group) {
  return group == "classifier" || group == "head" || group == "lm_head";
}

/// "q_proj" of "model.layers.0.self_attn.q_proj".
StringRef lastPart(StringRef module) {
  auto [head, tail] = module.rsplit('.');
  return tail.empty() ? head : tail;
}

bool targets(StringRef target, StringRef module) {
  return target == kAllLinear || module == target || module.ends_with(("." + target).str());
}

} // namespace

Value ForwardBuilder::baseWeight(Value weight, StringRef group) {
  const LoraSpec &lora = spec.lora;
  auto param = weight.getDefiningOp<bert::ParamOp>();
  if (!lora.enabled || lora.base.empty() || lora.base == kAutoBase ||
      !group.starts_with("encoder.layer.") || param.getTrainable())
    return weight;
  bert::WeightFormat format = lora.base == "int8" ? bert::WeightFormat::Int8Rows
                              : lora.doubleQuant  ? bert::WeightFormat::Nf4DoubleQuant
                                                  : bert::WeightFormat::Nf4;
  RankedTensorType values = param.getValueType();
  auto quantized = bert::QuantizedWeightAttr::get(&ctx, format, values.getShape());
  if (!param.getQuantizedAttr()) {
    param.setQuantizedAttr(quantized);
    param.getResult().setType(RankedTensorType::get({quantized.getBytes()}, builder.getI8Type()));
  }
  return builder.create<bert::DequantizeOp>(param.getLoc(), values, param.getResult(), quantized);
}

Value ForwardBuilder::withAdapter(Value x, Value projected, StringRef module, StringRef group) {
  const LoraSpec &lora = spec.lora;
  if (!lora.enabled || isHeadGroup(group))
    return projected;
  linearModules.insert(lastPart(module).str());
  bool adapted = false;
  for (const std::string &target : lora.targets)
    if (targets(target, module)) {
      matchedTargets.insert(target);
      adapted = true;
    }
  if (!adapted)
    return projected;
  adaptedModules.push_back(module.str());
  const KeyLocations &ll = lora.locations;
  int64_t in = cast<RankedTensorType>(x.getType()).getShape().back();
  int64_t out = cast<RankedTensorType>(projected.getType()).getShape().back();
  // An adapter trains unless [train] freeze names its layer's group.
  bool trainable = !spec.inFreezeList(group);
  Value down = createParam(module + ".lora_A.weight", {lora.rank, in}, group, "kaiming_uniform",
                           /*decay=*/true, trainable, ll, "r");
  Value up = createParam(module + ".lora_B.weight", {out, lora.rank}, group, "zeros",
                         /*decay=*/true, trainable, ll, "r");
  Location loc = at((module + ".lora").str(), ll, "targets");
  Value dropped = lora.dropout > 0 ? dropout(x, lora.dropout, loc) : x;
  Value reduced =
      builder.create<bert::LinearOp>(loc, withLastDim(x, lora.rank), dropped, down, Value());
  Value expanded = builder.create<bert::LinearOp>(loc, withLastDim(x, out), reduced, up, Value());
  Value scaled = builder.create<bert::ScaleOp>(loc, expanded.getType(), expanded,
                                               builder.getF32FloatAttr(float(lora.scaling())));
  return add(projected, scaled, loc);
}

LogicalResult ForwardBuilder::checkLoraTargets() {
  const LoraSpec &lora = spec.lora;
  if (!lora.enabled)
    return success();
  bool ok = true;
  for (const std::string &target : lora.targets) {
    if (matchedTargets.contains(target))
      continue;
    emitError(lora.locations.of("targets", ctx))
        << "[lora] target '" << target << "' names no linear layer of this '" << model.family
        << "' model, whose layers are " << llvm::join(linearModules, ", ")
        << " (the task head trains whole)";
    ok = false;
  }
  // [train] freeze may freeze every adapter's layer: nothing would train where the task head
  // has no parameters (an LM head, or a custom head without layers that have them).
  bool anyTrainable = llvm::any_of(params, [](const auto &entry) {
    return entry.second.template getDefiningOp<bert::ParamOp>().getTrainable();
  });
  if (ok && !anyTrainable) {
    emitError(spec.train.locations.of("freeze", ctx))
        << "[train] freeze freezes every layer that has a LoRA adapter"
        << (spec.head.task == "causal_lm" ? "" : ", and the task head has no parameters")
        << ": nothing to train";
    ok = false;
  }
  return success(ok);
}

std::vector<std::string> ForwardBuilder::adapterTargetModules() const {
  const LoraSpec &lora = spec.lora;
  if (lora.targets.size() != 1 || lora.targets.front() != kAllLinear) {
    std::vector<std::string> written;
    for (const std::string &target : lora.targets)
      if (!llvm::is_contained(written, target))
        written.push_back(target);
    return written;
  }
  std::set<std::string> names;
  for (StringRef module : adaptedModules)
    names.insert(lastPart(module).str());
  return {names.begin(), names.end()};
}

} // namespace bertc
