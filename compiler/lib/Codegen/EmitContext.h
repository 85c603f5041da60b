//===- EmitContext.h - naming tensors in generated trainer code --*- C++ -*-===//
//
// What every op emitter needs: the C++ name of each tensor (a typed pointer into the
// arena declared once, with its shape in a comment) and its sizes as C++ expressions
// of the batch's actual dimensions `B` and `S`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "SlotNames.h"

#include "bert/Placement.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace bertc {

/// Which runtime the generated calls go to: the CPU kernels, or the CUDA launchers, which
/// take the same arguments and then the step's stream.
enum class KernelTarget { Cpu, Cuda };

class EmitContext {
public:
  explicit EmitContext(llvm::raw_ostream &os, KernelTarget target = KernelTarget::Cpu)
      : os(os), target(target) {}

  llvm::raw_ostream &os;
  const KernelTarget target;

  /// The start of a call of runtime kernel `kernel`: "  cpu::kernel(" or "  cuda::kernel(".
  std::string call(llvm::StringRef kernel) const;
  /// The end of a kernel call: ");\n", or ", dev.stream);\n" for a CUDA launch.
  llvm::StringRef end() const;

  /// Declares the pointers of `op`'s results (at their `bert.offsets`) and, for a
  /// parameter, its value slot; afterwards name() answers for them.
  mlir::LogicalResult declareResults(mlir::Operation *op);

  /// The C++ pointer expression of `value` (SlotNames.h: "l0_ffn_gelu").
  std::string name(mlir::Value value) const;
  /// The name of an optional operand, or where it is absent a null pointer of `like`'s
  /// element type ("static_cast<const bf16 *>(nullptr)"), which a templated kernel's
  /// argument deduction accepts.
  std::string nameOrNull(mlir::Value value, mlir::Value like) const;
  /// `value`'s number, in the order the function defines its values: its id for plan
  /// checking.
  unsigned id(mlir::Value value) const;
  /// What `value` is, for messages: "l0_ffn_gelu = bert.gelu [B, S, 128] f32".
  std::string describe(mlir::Value value) const;
  /// Its bytes at the batch's dimensions, e.g. "(B * S * 64) * 4".
  static std::string bytes(mlir::Value value);
  /// Number of elements, e.g. "B * S * 64".
  static std::string numel(mlir::Value value);
  /// Product of all but the last dimension: "B * S" for [B, S, H], "B" for [B, C].
  static std::string rows(mlir::Value value);
  /// Elements per sample, the product of all but the leading (batch) dimension: "S * 64"
  /// for [B, S, 64].
  static std::string sampleSize(mlir::Value value);
  /// Rows per sample, the product of all but the first and the last dimension: "S" for
  /// [B, S, 64], "1" for [B, 64].
  static std::string tokensPerSample(mlir::Value value);
  /// The C++ dropout key of random stream `stream` in the generated step.
  static std::string dropoutKey(uint32_t stream);
  /// The last dimension.
  static int64_t features(mlir::Value value);
  /// The attention kernels' AttentionHeads argument (runtime/include/bertc/runtime/
  /// attention_heads.h): the head count alone where every query head has its own key/value
  /// head (kvHeads 0 or heads) and there is no causal mask, as BERT's calls have always read;
  /// else "AttentionHeads{heads, kvHeads, causal}".
  static std::string attentionHeads(int64_t heads, int64_t kvHeads, bool causal);
  /// The C++ literal of a float value ("0.5f").
  static std::string floatLiteral(float value);
  /// The C++ literal of a double value that reads back exactly ("0.999").
  static std::string doubleLiteral(double value);
  /// The pointer to one of a parameter's fixed slots (its gradient, AdamW moments, ...) as
  /// `element *`; the callers check that the slot is there.
  static std::string paramSlot(mlir::Value param, mlir::bert::ParamSlotKind slot,
                               llvm::StringRef element = "float");

private:
  llvm::DenseMap<mlir::Value, unsigned> ids;
  llvm::DenseMap<mlir::Value, std::string> names;
  llvm::DenseMap<mlir::Value, std::string> descriptions;
  SlotNamer namer;
  unsigned nextId = 0;
};

/// The pointer to `op`'s kernel workspace (`bert.workspace`, KernelWorkspace.h) as
/// `float *`, or failure with a diagnostic when it has none.
mlir::FailureOr<std::string> kernelWorkspace(mlir::Operation *op);
/// The same, or `nullptr` when the plan gave `op` none, for a kernel that needs a workspace
/// only at some sizes (kernelWorkspaceBytes is 0 at the plan's bounds, and so at any smaller
/// size).
std::string kernelWorkspaceOrNull(mlir::Operation *op);

/// The loss normalizer of a loss with `scale` (bert.cross_entropy, bert.lm_head_loss): the
/// runtime's, divided by the scale (the span loss's 1/2 doubles it).
std::string lossNormalizer(float scale);

/// The CUDA step's column-sum tickets (cuda::StepDevice::columnSumTickets).
inline constexpr const char *kColumnSumTicketsArgument = "dev.columnSumTickets";
/// A CUDA column sum's scratch arguments, "workspace, tickets, ": `op`'s workspace, which it
/// has when its rows make more than one slice (else nullptr), and the step's tickets.
std::string columnSumScratch(mlir::Operation *op);

/// The fp32 gradient slot of `param` that accumulating `op` adds into, or failure with a
/// diagnostic when the plan gave it none.
mlir::FailureOr<std::string> gradientSlot(mlir::Operation *op, mlir::Value param);

/// An op emitter of one family: writes the kernel calls of `op` and returns success, or
/// failure after a diagnostic; std::nullopt when `op` is not of its family.
using OpEmitter = std::optional<mlir::LogicalResult> (*)(mlir::Operation *op, EmitContext &ctx);

std::optional<mlir::LogicalResult> emitGemmOp(mlir::Operation *op, EmitContext &ctx);
std::optional<mlir::LogicalResult> emitPointwiseOp(mlir::Operation *op, EmitContext &ctx);
std::optional<mlir::LogicalResult> emitDecoderOp(mlir::Operation *op, EmitContext &ctx);
std::optional<mlir::LogicalResult> emitHeadShapeOp(mlir::Operation *op, EmitContext &ctx);
std::optional<mlir::LogicalResult> emitLossOptimizerOp(mlir::Operation *op, EmitContext &ctx);

/// Success when the parameter of `adamw` (a bert.adamw) has every slot its update reads: the
/// moments (and their absmaxes for an 8-bit state), the gradient unless the update takes it
/// as an operand, and a 16-bit parameter's master; else failure with a diagnostic.
mlir::LogicalResult checkAdamWSlots(mlir::Operation *adamw);
/// The fp32 values an update of `param` writes: a 16-bit parameter's master slot, else
/// `values` (the parameter's own name or slot).
std::string adamwValues(mlir::Value param, llvm::StringRef values);
/// An 8-bit state's argument, "{mCodes, vCodes, mAbsmax, vAbsmax}" (abi/adamw_8bit_state.h).
std::string eightBitStateArgument(mlir::Value param);
/// The cpu::AdamWConfig argument of `adamw`'s update with `weightDecay`:
/// "{ctx.lr, beta1, beta2, eps, weightDecay, ctx.adamStep}".
std::string adamwConfigArgument(mlir::Operation *adamw, double weightDecay);

/// Emits `op` with the first of `emitters` whose family it is; an op of none of them is an
/// error naming the target and the op.
mlir::LogicalResult emitOp(mlir::Operation *op, EmitContext &ctx,
                           llvm::ArrayRef<OpEmitter> emitters);

} // namespace bertc
