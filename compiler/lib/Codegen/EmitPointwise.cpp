//===- EmitPointwise.cpp - embeddings, norms, activations, dropout --------===//
//
// Everything elementwise or row-wise for both targets (the heads' pooling and layout
// changes are EmitHeadShape.cpp's):
// the CUDA launchers take the CPU kernels' arguments and then the stream. Where they
// differ (the loss seed lives on the device; the CUDA LayerNorm keeps its row statistics
// in the op's kernel workspace; a backward fused with a bias gradient is one CUDA launch
// and two CPU calls), the case says so.
//
//===----------------------------------------------------------------------===//

#include "EmitContext.h"

#include "bert/BertDialect.h"
#include "bertc/abi/quantized_weight_layout.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

namespace bertc {

namespace {

/// The dequantization of a quantized weight into its reader's transient: the NF4 or int8
/// kernels of cpu_quantized_weight.h (cuda_quantized_weight.h), over the parts that
/// quantized_weight_layout.h places.
void emitDequantize(EmitContext &ctx, DequantizeOp op) {
  QuantizedWeightAttr weight = op.getWeight();
  std::string input = ctx.name(op.getInput()), out = ctx.name(op.getResult());
  if (weight.getFormat() == WeightFormat::Int8Rows) {
    int64_t rows = weight.getShape()[0], cols = weight.getShape()[1];
    ctx.os << ctx.call("dequantizeInt8Rows") << "reinterpret_cast<const int8_t *>(" << input
           << "), reinterpret_cast<const float *>(" << input << " + "
           << int8RowsLayout(rows, cols).absmaxOffset << "), " << out << ", " << rows << ", "
           << cols << ctx.end();
    return;
  }
  bool nested = weight.getFormat() == WeightFormat::Nf4DoubleQuant;
  ctx.os << ctx.call("dequantizeNf4") << "nf4WeightAt(" << input << ", nf4Layout("
         << weight.getNumValues() << ", " << (nested ? "true" : "false") << ")), " << out
         << ctx.end();
}

/// A copy between the device arena and its host mirror (bert.offload, bert.reload): on a
/// GPU over the host link, on the step's stream; on the CPU, where both are host memory, an
/// element copy.
void emitHostCopy(EmitContext &ctx, Value from, Value to, StringRef kind) {
  if (ctx.target == KernelTarget::Cuda) {
    ctx.os << "  BERTC_CUDA_CHECK(cudaMemcpyAsync(" << ctx.name(to) << ", " << ctx.name(from)
           << ", " << EmitContext::bytes(to) << ", " << kind << ", dev.stream));\n";
    return;
  }
  ctx.os << ctx.call("convert") << ctx.name(from) << ", " << ctx.name(to) << ", "
         << EmitContext::numel(to) << ctx.end();
}

/// The runtime's name of a tanh or ReLU (or its gradient): its kernels' prefix.
std::string activationOf(Operation *op) { return isa<TanhOp, TanhGradOp>(op) ? "tanh" : "relu"; }

/// The prefix of the kernels of a GELU computed as `approximate` says: gelu (erf) or geluTanh.
std::string geluKernels(GeluApproximation approximate) {
  return approximate == GeluApproximation::Tanh ? "geluTanh" : "gelu";
}

/// "fn(a, b, ..., n" then the end of the call, for kernels over every element of `sized`.
void emitElementwise(EmitContext &ctx, StringRef fn, ArrayRef<Value> args, Value sized) {
  ctx.os << ctx.call(fn);
  for (Value arg : args)
    ctx.os << ctx.name(arg) << ", ";
  ctx.os << EmitContext::numel(sized) << ctx.end();
}

/// fn(ids, dy, table, tokens, vocab, hidden, paddingIdx): the scatter-add of dy's rows into
/// `table` (a pointer expression) of `tableShaped`'s shape, but the padding row's (-1: none).
void emitEmbeddingBackward(EmitContext &ctx, StringRef fn, Value ids, Value dy,
                           const std::string &table, Value tableShaped,
                           std::optional<uint64_t> paddingIdx) {
  auto shape = cast<RankedTensorType>(tableShaped.getType()).getShape();
  ctx.os << ctx.call(fn) << ctx.name(ids) << ", " << ctx.name(dy) << ", " << table << ", "
         << EmitContext::numel(ids) << ", " << shape[0] << ", " << shape[1] << ", "
         << (paddingIdx ? int64_t(*paddingIdx) : -1) << ctx.end();
}

/// "B, S * 64, rate, key" for dropout over the samples of `sized`.
std::string dropoutArgs(Value sized, float rate, uint32_t stream) {
  return "B, " + EmitContext::sampleSize(sized) + ", " + EmitContext::floatLiteral(rate) + ", " +
         EmitContext::dropoutKey(stream);
}

/// The CUDA LayerNorm's "mean, rstd, " pointers: its workspace holds `rows` of each.
FailureOr<std::string> cudaStatistics(Operation *op, const std::string &rows) {
  FailureOr<std::string> workspace = kernelWorkspace(op);
  if (failed(workspace))
    return failure();
  return *workspace + ", " + *workspace + " + (" + rows + "), ";
}

/// `op`'s LayerNorm forward: fn(inputs..., gamma, beta, y, [CUDA: mean, rstd,] rows, cols,
/// eps), with `inputs` x (layerNormForward) or a, b and their sum (addLayerNormForward).
/// `dropout` (dropoutAddLayerNormForward's "rate, key") gives the rows as the samples and
/// their tokens and ends the call.
LogicalResult emitLayerNormForward(EmitContext &ctx, Operation *op, StringRef fn,
                                   ArrayRef<Value> inputs, Value gamma, Value beta, Value y,
                                   APFloat epsilon, const std::string &dropout = "") {
  std::string rows = EmitContext::rows(y);
  FailureOr<std::string> statistics =
      ctx.target == KernelTarget::Cuda ? cudaStatistics(op, rows) : std::string();
  if (failed(statistics))
    return failure();
  ctx.os << ctx.call(fn);
  for (Value input : inputs)
    ctx.os << ctx.name(input) << ", ";
  ctx.os << ctx.name(gamma) << ", " << ctx.name(beta) << ", " << ctx.name(y) << ", " << *statistics
         << (dropout.empty() ? rows : "B, " + EmitContext::tokensPerSample(y)) << ", "
         << EmitContext::features(y) << ", " << EmitContext::floatLiteral(epsilon.convertToFloat())
         << (dropout.empty() ? "" : ", " + dropout) << ctx.end();
  return success();
}

/// How a fused backward's bias gradient is kept: added into the parameter's gradient slot
/// (the ...Accumulate kernels), or written to the op's bias-gradient result.
struct BiasGradientDestination {
  std::string pointer;
  bool accumulate;
};

/// The bias gradient destination of `op`: its parameter's slot (failure with a diagnostic
/// when the plan gave it none), or its result.
FailureOr<BiasGradientDestination> biasGradientDestination(EmitContext &ctx, Operation *op) {
  using Destination = FailureOr<BiasGradientDestination>;
  return llvm::TypeSwitch<Operation *, Destination>(op)
      .Case<GeluGradBiasOp, DropoutGradBiasOp>([&](auto fused) -> Destination {
        return BiasGradientDestination{ctx.name(fused.getBiasGrad()), false};
      })
      .Case<GeluGradAccumulateBiasOp, DropoutGradAccumulateBiasOp>([&](auto fused) -> Destination {
        FailureOr<std::string> slot = gradientSlot(op, fused.getParam());
        if (failed(slot))
          return failure();
        return BiasGradientDestination{*slot, true};
      })
      .Default([&](Operation *) { return op->emitOpError("has no bias gradient"); });
}

/// `op`, a backward writing dx fused with the bias gradient of dx: on the CPU the backward
/// (emitCpuBackward) then cpu::biasBackward(Accumulate) over dx; on CUDA one call of
/// `cudaFn` (with "Accumulate" where the gradient goes into a slot) with `cudaArgs`, the
/// bias gradient, the op's workspace and the run's tickets, then `cudaSizes`.
LogicalResult emitWithBiasGradient(EmitContext &ctx, Operation *op, Value dx,
                                   llvm::function_ref<void()> emitCpuBackward, StringRef cudaFn,
                                   ArrayRef<Value> cudaArgs, const std::string &cudaSizes) {
  FailureOr<BiasGradientDestination> db = biasGradientDestination(ctx, op);
  if (failed(db))
    return failure();
  const StringRef accumulate = db->accumulate ? "Accumulate" : "";
  if (ctx.target == KernelTarget::Cpu) {
    emitCpuBackward();
    ctx.os << ctx.call("biasBackward" + accumulate.str()) << ctx.name(dx) << ", " << db->pointer
           << ", " << EmitContext::rows(dx) << ", " << EmitContext::features(dx) << ctx.end();
    return success();
  }
  ctx.os << ctx.call(cudaFn.str() + accumulate.str());
  for (Value arg : cudaArgs)
    ctx.os << ctx.name(arg) << ", ";
  ctx.os << db->pointer << ", " << columnSumScratch(op) << cudaSizes << ctx.end();
  return success();
}

/// LayerNorm backward `op`'s call to `fn` (layerNormBackward, or ...Accumulate into the
/// gradient slots) writing dx and the fp32 `dgamma` and `dbeta`. On CUDA the kernel that
/// writes dx recomputes the statistics (the IR keeps no forward's) into the op's
/// workspace, which holds the partial sums of dgamma and dbeta after them (summed with the
/// run's tickets).
template <typename LayerNormGrad>
LogicalResult emitLayerNormBackward(EmitContext &ctx, LayerNormGrad op, StringRef fn,
                                    const std::string &dgamma, const std::string &dbeta) {
  Value dy = op.getResultGrad(), x = op.getInput(), gamma = op.getGamma(), dx = op.getInputGrad();
  std::string rows = EmitContext::rows(x);
  std::string cols = std::to_string(EmitContext::features(x));
  std::string eps = EmitContext::floatLiteral(op.getEpsilon().convertToFloat());
  auto &os = ctx.os;
  if (ctx.target == KernelTarget::Cpu) {
    os << ctx.call(fn) << ctx.name(dy) << ", " << ctx.name(x) << ", " << ctx.name(gamma) << ", "
       << ctx.name(dx) << ", " << dgamma << ", " << dbeta << ", " << rows << ", " << cols << ", "
       << eps << ctx.end();
    return success();
  }
  FailureOr<std::string> statistics = cudaStatistics(op, rows);
  FailureOr<std::string> workspace = kernelWorkspace(op);
  if (failed(statistics) || failed(workspace))
    return failure();
  os << ctx.call(fn) << ctx.name(dy) << ", " << ctx.name(x) << ", " << ctx.name(gamma) << ", "
     << eps << ", " << *statistics << ctx.name(dx) << ", " << dgamma << ", " << dbeta << ", "
     << *workspace << " + 2 * (" << rows << "), " << kColumnSumTicketsArgument << ", " << rows
     << ", " << cols << ctx.end();
  return success();
}

} // namespace

std::optional<LogicalResult> emitPointwiseOp(Operation *op, EmitContext &ctx) {
  auto &os = ctx.os;
  const bool cuda = ctx.target == KernelTarget::Cuda;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](FillOp fill) {
        std::string value = EmitContext::floatLiteral(fill.getValue().convertToFloat());
        std::string scale = fill.getLossScaled() ? "ctx.lossScale" : "1.0f";
        if (cuda)
          os << ctx.call("fillScalar") << ctx.name(fill.getResult()) << ", " << value << ", "
             << scale << ctx.end();
        else
          os << "  *" << ctx.name(fill.getResult()) << " = " << value
             << (fill.getLossScaled() ? " * ctx.lossScale" : "") << ";\n";
        return success();
      })
      .Case([&](CastOp c) {
        emitElementwise(ctx, "convert", {c.getInput(), c.getResult()}, c.getResult());
        return success();
      })
      .Case([&](EmbeddingOp e) {
        os << ctx.call("embeddingForward") << ctx.name(e.getIds()) << ", " << ctx.name(e.getTable())
           << ", " << ctx.name(e.getResult()) << ", " << EmitContext::numel(e.getIds()) << ", "
           << EmitContext::features(e.getResult()) << ctx.end();
        return success();
      })
      .Case([&](EmbeddingGradOp g) {
        emitEmbeddingBackward(ctx, "embeddingBackward", g.getIds(), g.getResultGrad(),
                              ctx.name(g.getTableGrad()), g.getTableGrad(), g.getPaddingIdx());
        return success();
      })
      .Case([&](AccumulateEmbeddingGradOp g) -> LogicalResult {
        FailureOr<std::string> slot = gradientSlot(op, g.getParam());
        if (failed(slot))
          return failure();
        emitEmbeddingBackward(ctx, "embeddingBackwardAccumulate", g.getIds(), g.getResultGrad(),
                              *slot, g.getParam(), g.getPaddingIdx());
        return success();
      })
      .Case([&](AddOp add) {
        emitElementwise(ctx, "add", {add.getLhs(), add.getRhs(), add.getResult()}, add.getResult());
        return success();
      })
      .Case([&](DequantizeOp d) {
        emitDequantize(ctx, d);
        return success();
      })
      .Case([&](OffloadOp o) {
        emitHostCopy(ctx, o.getInput(), o.getResult(), "cudaMemcpyDeviceToHost");
        return success();
      })
      .Case([&](ReloadOp r) {
        emitHostCopy(ctx, r.getInput(), r.getResult(), "cudaMemcpyHostToDevice");
        return success();
      })
      .Case([&](ScaleOp s) {
        os << ctx.call("scale") << ctx.name(s.getInput()) << ", " << ctx.name(s.getResult()) << ", "
           << EmitContext::floatLiteral(s.getFactor().convertToFloat()) << ", "
           << EmitContext::numel(s.getResult()) << ctx.end();
        return success();
      })
      .Case([&](LayerNormOp ln) {
        return emitLayerNormForward(ctx, op, "layerNormForward", {ln.getInput()}, ln.getGamma(),
                                    ln.getBeta(), ln.getResult(), ln.getEpsilon());
      })
      .Case([&](AddLayerNormOp ln) {
        Value lhs = ln.getLhs(), rhs = ln.getRhs(), sum = ln.getSum();
        const float rate = ln.getDropout().convertToFloat();
        const std::string dropout = rate > 0.0f ? EmitContext::floatLiteral(rate) + ", " +
                                                      EmitContext::dropoutKey(ln.getStream())
                                                : "";
        if (cuda)
          return emitLayerNormForward(
              ctx, op, rate > 0.0f ? "dropoutAddLayerNormForward" : "addLayerNormForward",
              {lhs, rhs, sum}, ln.getGamma(), ln.getBeta(), ln.getOutput(), ln.getEpsilon(),
              dropout);
        // The CPU's: the (dropout and) add, then the LayerNorm of the sum.
        if (rate > 0.0f)
          os << ctx.call("dropoutAdd") << ctx.name(lhs) << ", " << ctx.name(rhs) << ", "
             << ctx.name(sum) << ", " << dropoutArgs(sum, rate, ln.getStream()) << ctx.end();
        else
          emitElementwise(ctx, "add", {lhs, rhs, sum}, sum);
        return emitLayerNormForward(ctx, op, "layerNormForward", {sum}, ln.getGamma(), ln.getBeta(),
                                    ln.getOutput(), ln.getEpsilon());
      })
      .Case([&](LayerNormGradOp g) {
        return emitLayerNormBackward(ctx, g, "layerNormBackward", ctx.name(g.getGammaGrad()),
                                     ctx.name(g.getBetaGrad()));
      })
      .Case([&](AccumulateLayerNormGradOp g) -> LogicalResult {
        FailureOr<std::string> gammaSlot = gradientSlot(op, g.getGamma());
        FailureOr<std::string> betaSlot = gradientSlot(op, g.getBeta());
        if (failed(gammaSlot) || failed(betaSlot))
          return failure();
        return emitLayerNormBackward(ctx, g, "layerNormBackwardAccumulate", *gammaSlot, *betaSlot);
      })
      .Case([&](GeluOp g) {
        emitElementwise(ctx, geluKernels(g.getApproximate()) + "Forward",
                        {g.getInput(), g.getResult()}, g.getResult());
        return success();
      })
      .Case([&](GeluGradOp g) {
        emitElementwise(ctx, geluKernels(g.getApproximate()) + "Backward",
                        {g.getResultGrad(), g.getInput(), g.getInputGrad()}, g.getInputGrad());
        return success();
      })
      .Case<GeluGradAccumulateBiasOp, GeluGradBiasOp>([&](auto g) {
        Value dy = g.getResultGrad(), x = g.getInput(), dx = g.getInputGrad();
        const std::string kernels = geluKernels(g.getApproximate());
        return emitWithBiasGradient(
            ctx, g, dx, [&] { emitElementwise(ctx, kernels + "Backward", {dy, x, dx}, dx); },
            kernels + "BackwardBias", {dy, x, dx},
            EmitContext::rows(dx) + ", " + std::to_string(EmitContext::features(dx)));
      })
      // The activations whose backward reads their output: tanhForward, reluBackward, ...
      .Case<TanhOp, ReluOp>([&](auto a) {
        emitElementwise(ctx, activationOf(op) + "Forward", {a.getInput(), a.getResult()},
                        a.getResult());
        return success();
      })
      .Case<TanhGradOp, ReluGradOp>([&](auto a) {
        emitElementwise(ctx, activationOf(op) + "Backward",
                        {a.getResultGrad(), a.getResult(), a.getInputGrad()}, a.getInputGrad());
        return success();
      })
      .Case([&](DropoutOp d) {
        os << ctx.call("dropoutForward") << ctx.name(d.getInput()) << ", "
           << ctx.name(d.getResult()) << ", "
           << dropoutArgs(d.getResult(), d.getRate().convertToFloat(), d.getStream()) << ctx.end();
        return success();
      })
      .Case([&](DropoutGradOp d) {
        os << ctx.call("dropoutBackward") << ctx.name(d.getResultGrad()) << ", "
           << ctx.name(d.getInputGrad()) << ", "
           << dropoutArgs(d.getInputGrad(), d.getRate().convertToFloat(), d.getStream())
           << ctx.end();
        return success();
      })
      .Case<DropoutGradAccumulateBiasOp, DropoutGradBiasOp>([&](auto d) {
        Value dy = d.getResultGrad(), dx = d.getInputGrad();
        const float rate = d.getRate().convertToFloat();
        return emitWithBiasGradient(
            ctx, d, dx,
            [&] {
              os << ctx.call("dropoutBackward") << ctx.name(dy) << ", " << ctx.name(dx) << ", "
                 << dropoutArgs(dx, rate, d.getStream()) << ctx.end();
            },
            "dropoutBackwardBias", {dy, dx},
            "B, " + EmitContext::tokensPerSample(dx) + ", " +
                std::to_string(EmitContext::features(dx)) + ", " + EmitContext::floatLiteral(rate) +
                ", " + EmitContext::dropoutKey(d.getStream()));
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace bertc
