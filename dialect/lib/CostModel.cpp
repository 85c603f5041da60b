//===- CostModel.cpp - the kernels of the bert ops ------------------------===//
//
// CostOpInterface for the ops whose kernels are not one elementwise pass (attention is
// in AttentionCost.cpp). The GEMMs are one library call at their operands' precision;
// norms, activations, dropout, embeddings, gradient accumulation and AdamW are bertc's
// own kernels, priced by their arithmetic and the bytes they move at their element sizes.
// Both targets run the same kernels for these ops except where a rule says otherwise.
// Sizes at a batch follow the dialect's convention: the first dynamic dimension is the
// batch, the second the seq.
//
//===----------------------------------------------------------------------===//

#include "CostRules.h"

#include "bert/Placement.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::bert;
using namespace mlir::bert::cost;

SmallVector<int64_t> mlir::bert::shapeAt(RankedTensorType type, int64_t batch, int64_t seq) {
  SmallVector<int64_t> shape;
  int dynamicSeen = 0;
  for (int64_t dim : type.getShape())
    shape.push_back(ShapedType::isDynamic(dim) ? (dynamicSeen++ == 0 ? batch : seq) : dim);
  return shape;
}

double mlir::bert::numElementsAt(Type type, int64_t batch, int64_t seq) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped)
    return 0;
  double elements = 1;
  for (int64_t dim : shapeAt(shaped, batch, seq))
    elements *= double(dim);
  return elements;
}

double mlir::bert::bytesAt(Type type, int64_t batch, int64_t seq) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped)
    return 0;
  return numElementsAt(type, batch, seq) * double((shaped.getElementTypeBitWidth() + 7) / 8);
}

double mlir::bert::operandAndResultBytes(Operation *op, int64_t batch, int64_t seq) {
  double bytes = 0;
  for (Value value : op->getOperands())
    bytes += bytesOf(value, batch, seq);
  for (Value value : op->getResults())
    bytes += bytesOf(value, batch, seq);
  return bytes;
}

KernelWork mlir::bert::elementwiseKernel(Operation *op, int64_t batch, int64_t seq) {
  double elements = 0;
  for (Value result : op->getResults())
    elements += elementsAt(result, batch, seq);
  return {ComputeUnit::Fp32Cores, elements, operandAndResultBytes(op, batch, seq)};
}

namespace {

/// A kernel of bertc's own doing `flopsPerElement` per element of `sized` and moving every
/// operand and result of `op` once.
KernelWork pointwiseKernel(Operation *op, Value sized, double flopsPerElement, int64_t batch,
                           int64_t seq) {
  return {ComputeUnit::Fp32Cores, flopsPerElement * elementsAt(sized, batch, seq),
          operandAndResultBytes(op, batch, seq)};
}

/// Dropout at `rate`: a mask draw and a multiply per element, or a copy without dropout.
double dropoutFlopsPerElement(float rate) { return rate > 0.0f ? kDropoutDrawFlops + 1 : 0; }

/// Dropout at `rate` over the elements of `sized`.
KernelWork dropoutKernel(Operation *op, Value sized, float rate, int64_t batch, int64_t seq) {
  return pointwiseKernel(op, sized, dropoutFlopsPerElement(rate), batch, seq);
}

/// GELU's derivative from its input (erf and exp, or the tanh approximation's tanh and
/// polynomials): about 24 flops per element either way.
constexpr double kGeluGradFlops = 24;

} // namespace

//===----------------------------------------------------------------------===//
// GEMMs: one OpenBLAS or cuBLASLt call at the operands' precision
//===----------------------------------------------------------------------===//

// x W^T plus the bias, if any, which cuBLASLt adds in its epilogue and the CPU as sgemm's
// beta C over rows filled with it.
SmallVector<KernelWork, 1> LinearOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  double rows = rowsAt(getInput(), batch, seq);
  double out = features(getResult());
  double biasFlops = getBias() ? rows * out : 0.0;
  return {{gemmUnit(getInput(), getTf32()), gemmFlops(rows, features(getInput()), out) + biasFlops,
           operandAndResultBytes(*this, batch, seq)}};
}

namespace {
/// dx = dy W, one GEMM reading its operands (the addend too, for linear_grad_input_add).
template <typename InputGradOp>
SmallVector<KernelWork, 1> inputGradientGemm(InputGradOp op, int64_t batch, int64_t seq) {
  return {{gemmUnit(op.getResultGrad(), op.getTf32()),
           gemmFlops(rowsAt(op.getResultGrad(), batch, seq), features(op.getResultGrad()),
                     features(op.getInputGrad())),
           operandAndResultBytes(op, batch, seq)}};
}
} // namespace

SmallVector<KernelWork, 1> LinearGradInputOp::estimateKernels(int64_t batch, int64_t seq,
                                                              CostTarget) {
  return inputGradientGemm(*this, batch, seq);
}

// The same GEMM with beta = 1 over the addend (C).
SmallVector<KernelWork, 1> LinearGradInputAddOp::estimateKernels(int64_t batch, int64_t seq,
                                                                 CostTarget) {
  return inputGradientGemm(*this, batch, seq);
}

// dW = dy^T x, summed over every row into fp32.
SmallVector<KernelWork, 1> LinearGradWeightOp::estimateKernels(int64_t batch, int64_t seq,
                                                               CostTarget) {
  return {{gemmUnit(getInput(), getTf32()),
           gemmFlops(rowsAt(getResultGrad(), batch, seq), features(getResultGrad()),
                     features(getInput())),
           operandAndResultBytes(*this, batch, seq)}};
}

// The same GEMM with beta = 1 into the fp32 gradient slot: the slot is read as well as written.
SmallVector<KernelWork, 1> AccumulateLinearGradWeightOp::estimateKernels(int64_t batch, int64_t seq,
                                                                         CostTarget) {
  double values = double(cast<RankedTensorType>(getParam().getType()).getNumElements());
  return {
      {gemmUnit(getInput(), getTf32()),
       gemmFlops(rowsAt(getResultGrad(), batch, seq), features(getResultGrad()),
                 features(getInput())),
       bytesOf(getResultGrad(), batch, seq) + bytesOf(getInput(), batch, seq) + 2 * 4 * values}};
}

// The column sum of dy added into the bias's fp32 slot, which is read as well as written.
SmallVector<KernelWork, 1> AccumulateBiasGradOp::estimateKernels(int64_t batch, int64_t seq,
                                                                 CostTarget) {
  double out = double(cast<RankedTensorType>(getParam().getType()).getNumElements());
  return {{ComputeUnit::Fp32Cores, 2 * out, bytesOf(getResultGrad(), batch, seq) + 2 * 4 * out}};
}

//===----------------------------------------------------------------------===//
// Norms and activations
//===----------------------------------------------------------------------===//

namespace {
/// A row's mean and variance, two passes: about 3 flops per element.
constexpr double kLayerNormStatisticsFlops = 3;
/// Normalise, scale and shift: about 5 flops per element.
constexpr double kLayerNormApplyFlops = 5;
/// The backward from the statistics: x-hat, the two row sums of dy gamma and dy gamma
/// x-hat, and dx: about 8 per element; x-hat again and the column sums of d gamma and
/// d beta: about 3 more.
constexpr double kLayerNormInputGradFlops = 8;
constexpr double kLayerNormParamGradFlops = 3;
} // namespace

// The row statistics the CUDA kernel also writes (8 bytes per row of `hidden` elements)
// are left out.
SmallVector<KernelWork, 1> LayerNormOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {pointwiseKernel(*this, getResult(), kLayerNormStatisticsFlops + kLayerNormApplyFlops,
                          batch, seq)};
}

// One pass writing the sum and the normalised rows (statistics left out, as the LayerNorm's),
// with the dropout's draws where lhs is dropped out.
SmallVector<KernelWork, 1> AddLayerNormOp::estimateKernels(int64_t batch, int64_t seq,
                                                           CostTarget target) {
  double elements = elementsAt(getSum(), batch, seq), sum = bytesOf(getSum(), batch, seq);
  double addFlops = 1 + dropoutFlopsPerElement(getDropout().convertToFloat());
  if (target == CostTarget::Cpu) // a (dropout and) add, then a LayerNorm over the sum
    return {{ComputeUnit::Fp32Cores, addFlops * elements,
             bytesOf(getLhs(), batch, seq) + bytesOf(getRhs(), batch, seq) + sum},
            {ComputeUnit::Fp32Cores, (kLayerNormStatisticsFlops + kLayerNormApplyFlops) * elements,
             sum + bytesOf(getGamma(), batch, seq) + bytesOf(getBeta(), batch, seq) +
                 bytesOf(getOutput(), batch, seq)}};
  return {pointwiseKernel(*this, getOutput(),
                          addFlops + kLayerNormStatisticsFlops + kLayerNormApplyFlops, batch, seq)};
}

namespace {
/// The LayerNorm backward from dy and x, with gamma, writing dx and moving `paramGradBytes`
/// of d gamma and d beta (their fp32 slots read and written, or just written). The
/// forward's statistics are not kept: the CPU kernel recomputes them row by row inside
/// its one pass; on CUDA the row kernel that writes dx recomputes them (and writes them,
/// 8 bytes a row), and the column sums of d gamma and d beta read dy, x and the statistics
/// again.
SmallVector<KernelWork, 1> layerNormBackward(Value dy, Value x, Value gamma, Value dx,
                                             double paramGradBytes, int64_t batch, int64_t seq,
                                             CostTarget target) {
  double elements = elementsAt(x, batch, seq), rows = rowsAt(x, batch, seq);
  double rowBytes = bytesOf(dy, batch, seq) + bytesOf(x, batch, seq) + bytesOf(gamma, batch, seq) +
                    bytesOf(dx, batch, seq);
  double gradFlops = (kLayerNormInputGradFlops + kLayerNormParamGradFlops) * elements;
  if (target == CostTarget::Cpu)
    return {{ComputeUnit::Fp32Cores, kLayerNormStatisticsFlops * elements + gradFlops,
             rowBytes + paramGradBytes}};
  double statistics = 8 * rows;
  return {{ComputeUnit::Fp32Cores,
           (kLayerNormStatisticsFlops + kLayerNormInputGradFlops) * elements,
           rowBytes + statistics},
          {ComputeUnit::Fp32Cores, kLayerNormParamGradFlops * elements,
           bytesOf(dy, batch, seq) + bytesOf(x, batch, seq) + statistics + paramGradBytes}};
}

/// Bytes of d gamma and d beta: fp32, written, or (`accumulated`) read and written.
double paramGradBytes(Value gamma, bool accumulated) {
  return (accumulated ? 2 : 1) * 2 * 4 *
         double(cast<RankedTensorType>(gamma.getType()).getNumElements());
}
} // namespace

SmallVector<KernelWork, 1> LayerNormGradOp::estimateKernels(int64_t batch, int64_t seq,
                                                            CostTarget target) {
  return layerNormBackward(getResultGrad(), getInput(), getGamma(), getInputGrad(),
                           paramGradBytes(getGamma(), false), batch, seq, target);
}

// d gamma and d beta are added into their fp32 slots (each read and written) instead of
// written.
SmallVector<KernelWork, 1> AccumulateLayerNormGradOp::estimateKernels(int64_t batch, int64_t seq,
                                                                      CostTarget target) {
  return layerNormBackward(getResultGrad(), getInput(), getGamma(), getInputGrad(),
                           paramGradBytes(getGamma(), true), batch, seq, target);
}

// erf costs about a dozen flops, as does the tanh approximation's tanh and cubic.
SmallVector<KernelWork, 1> GeluOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {pointwiseKernel(*this, getResult(), 16, batch, seq)};
}

SmallVector<KernelWork, 1> GeluGradOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {pointwiseKernel(*this, getInputGrad(), kGeluGradFlops, batch, seq)};
}

SmallVector<KernelWork, 1> DropoutOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {dropoutKernel(*this, getResult(), getRate().convertToFloat(), batch, seq)};
}

SmallVector<KernelWork, 1> DropoutGradOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {dropoutKernel(*this, getInputGrad(), getRate().convertToFloat(), batch, seq)};
}

namespace {
/// A backward `backward` that writes dx, fused with the bias gradient of dx (`bias` values,
/// fp32, added into a slot, read and written, or just written): on CUDA one kernel, which
/// moves what the backward moves and the bias gradient; on the CPU the backward, then the
/// column sum reading dx again (as bert.accumulate_bias_grad or bert.bias_grad).
SmallVector<KernelWork, 1> withBiasGradient(KernelWork backward, Value bias, bool accumulated,
                                            Value dx, int64_t batch, int64_t seq,
                                            CostTarget target) {
  double out = double(cast<RankedTensorType>(bias.getType()).getNumElements());
  double biasBytes = (accumulated ? 2 : 1) * 4 * out;
  KernelWork sum{ComputeUnit::Fp32Cores, 2 * out, bytesOf(dx, batch, seq) + biasBytes};
  if (target == CostTarget::Cpu)
    return {backward, sum};
  backward.flops += sum.flops;
  backward.bytes += biasBytes;
  return {backward};
}

/// GELU's backward from dy and x to dx.
KernelWork geluBackward(Value dy, Value x, Value dx, int64_t batch, int64_t seq) {
  return {ComputeUnit::Fp32Cores, kGeluGradFlops * elementsAt(dx, batch, seq),
          bytesOf(dy, batch, seq) + bytesOf(x, batch, seq) + bytesOf(dx, batch, seq)};
}

/// Dropout's backward at `rate` from dy to dx.
KernelWork dropoutBackward(Value dy, Value dx, float rate, int64_t batch, int64_t seq) {
  return {ComputeUnit::Fp32Cores, dropoutFlopsPerElement(rate) * elementsAt(dx, batch, seq),
          bytesOf(dy, batch, seq) + bytesOf(dx, batch, seq)};
}

} // namespace

SmallVector<KernelWork, 1> GeluGradAccumulateBiasOp::estimateKernels(int64_t batch, int64_t seq,
                                                                     CostTarget target) {
  Value dx = getInputGrad();
  return withBiasGradient(geluBackward(getResultGrad(), getInput(), dx, batch, seq), getParam(),
                          /*accumulated=*/true, dx, batch, seq, target);
}

SmallVector<KernelWork, 1> DropoutGradAccumulateBiasOp::estimateKernels(int64_t batch, int64_t seq,
                                                                        CostTarget target) {
  Value dx = getInputGrad();
  return withBiasGradient(
      dropoutBackward(getResultGrad(), dx, getRate().convertToFloat(), batch, seq), getParam(),
      /*accumulated=*/true, dx, batch, seq, target);
}

SmallVector<KernelWork, 1> GeluGradBiasOp::estimateKernels(int64_t batch, int64_t seq,
                                                           CostTarget target) {
  Value dx = getInputGrad();
  return withBiasGradient(geluBackward(getResultGrad(), getInput(), dx, batch, seq), getBiasGrad(),
                          /*accumulated=*/false, dx, batch, seq, target);
}

SmallVector<KernelWork, 1> DropoutGradBiasOp::estimateKernels(int64_t batch, int64_t seq,
                                                              CostTarget target) {
  Value dx = getInputGrad();
  return withBiasGradient(
      dropoutBackward(getResultGrad(), dx, getRate().convertToFloat(), batch, seq), getBiasGrad(),
      /*accumulated=*/false, dx, batch, seq, target);
}

//===----------------------------------------------------------------------===//
// Gathers, scatters and layout changes: bytes only
//===----------------------------------------------------------------------===//

// The ids, and each looked-up row read from the table and written once (not the table).
SmallVector<KernelWork, 1> EmbeddingOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  KernelWork gather{ComputeUnit::Fp32Cores, 0,
                    bytesOf(getIds(), batch, seq) + 2 * bytesOf(getResult(), batch, seq)};
  // A table in host memory: the rows it gathers cross the host link.
  if (auto table = getTable().getDefiningOp<ParamOp>(); table && valueInHostMemory(table))
    gather.hostLinkBytes = bytesOf(getResult(), batch, seq);
  return {gather};
}

namespace {
/// The scatter-add of dy's rows into an fp32 table by `ids`: dy and the ids read, and the
/// rows the tokens touch read and written (an fp32 read and write per element).
KernelWork scatterAddRows(Value ids, Value resultGrad, int64_t batch, int64_t seq) {
  double gathered = elementsAt(resultGrad, batch, seq);
  return {ComputeUnit::Fp32Cores, gathered,
          bytesOf(ids, batch, seq) + bytesOf(resultGrad, batch, seq) + 2 * 4 * gathered};
}
} // namespace

// The fp32 table gradient is zeroed whole, then the scatter-add. On CUDA the zeroing is a
// memset of its own before the kernel.
SmallVector<KernelWork, 1> EmbeddingGradOp::estimateKernels(int64_t batch, int64_t seq,
                                                            CostTarget target) {
  KernelWork work = scatterAddRows(getIds(), getResultGrad(), batch, seq);
  work.bytes += bytesOf(getTableGrad(), batch, seq);
  work.launches = target == CostTarget::Cuda ? 2 : 1;
  return {work};
}

// The scatter-add straight into the slot: no table-sized zeroing or temporary.
SmallVector<KernelWork, 1> AccumulateEmbeddingGradOp::estimateKernels(int64_t batch, int64_t seq,
                                                                      CostTarget) {
  return {scatterAddRows(getIds(), getResultGrad(), batch, seq)};
}

// An add per input element (each row's tokens summed), every operand and result moved once.
SmallVector<KernelWork, 1> MeanTokensOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {pointwiseKernel(*this, getInput(), 1, batch, seq)};
}

// A divide per input gradient element (padding's zero), the same bytes.
SmallVector<KernelWork, 1> MeanTokensGradOp::estimateKernels(int64_t batch, int64_t seq,
                                                             CostTarget) {
  return {pointwiseKernel(*this, getInputGrad(), 1, batch, seq)};
}

// A compare per input element, every operand and result moved once.
SmallVector<KernelWork, 1> MaxTokensOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {pointwiseKernel(*this, getInput(), 1, batch, seq)};
}

// The maximum's token found again (a compare per input element), the gradient written there.
SmallVector<KernelWork, 1> MaxTokensGradOp::estimateKernels(int64_t batch, int64_t seq,
                                                            CostTarget) {
  return {pointwiseKernel(*this, getInputGrad(), 1, batch, seq)};
}

// A copy per input into its columns of the result: each input read and its part written,
// in a launch of its own.
SmallVector<KernelWork, 1> ConcatOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  KernelWork copies{ComputeUnit::Fp32Cores, 0, 0, int(getInputs().size())};
  for (Value input : getInputs())
    copies.bytes += 2 * bytesOf(input, batch, seq);
  return {copies};
}

// One token's row per sequence, read and written.
SmallVector<KernelWork, 1> SelectTokenOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {{ComputeUnit::Fp32Cores, 0, 2 * bytesOf(getResult(), batch, seq)}};
}

// A transpose moves bytes and computes nothing.
SmallVector<KernelWork, 1> TransposeOp::estimateKernels(int64_t batch, int64_t seq, CostTarget) {
  return {{ComputeUnit::Fp32Cores, 0, operandAndResultBytes(*this, batch, seq)}};
}

//===----------------------------------------------------------------------===//
// Gradient accumulation and the optimizer
//===----------------------------------------------------------------------===//

// The gradient read, and its fp32 slot read and written (the parameter is not touched).
SmallVector<KernelWork, 1> AccumulateGradOp::estimateKernels(int64_t batch, int64_t seq,
                                                             CostTarget) {
  double elements = elementsAt(getGrad(), batch, seq);
  return {{ComputeUnit::Fp32Cores, elements, bytesOf(getGrad(), batch, seq) + 2 * 4 * elements}};
}

// The update reads the fp32 value (a 16-bit parameter's master), gradient and both moments
// and writes the value and moments: seven fp32 accesses, about a dozen flops per element.
// A 16-bit parameter's working copy is rounded from each updated value in the same pass (a
// write and a flop, no read). After the backward the CUDA target updates every parameter
// with fp32 moments in one launch, and those with 8-bit moments as one group of a launch
// per few dozen, which this op shares (those few launches a step are not counted); an
// update in the backward (a `grad` operand) is a launch of its own, as every update is a
// call of its own on the CPU.
//
// With 8-bit moments (`state_block`) the moments are a byte each, read and written, and
// each block's two absmaxes are read and written (16 B a block); the dequantize (a table
// lookup and a scale per moment, 4 flops), the absmax of the new moments (2) and the
// requantize (a scale, then 8 compare-and-select steps of the binary search over 256
// codes, per moment: 34) add 40 flops to the update's dozen.
SmallVector<KernelWork, 1> AdamWOp::estimateKernels(int64_t, int64_t, CostTarget target) {
  auto type = cast<RankedTensorType>(getParam().getType());
  double elements = double(type.getNumElements());
  std::optional<int64_t> block = getStateBlock();
  KernelWork update{ComputeUnit::Fp32Cores, 12 * elements, 7 * 4 * elements};
  if (block) {
    double blocks = std::ceil(elements / double(*block));
    update = {ComputeUnit::Fp32Cores, (12 + 40) * elements,
              (3 * 4 + 4 * 1) * elements + 16 * blocks};
  }
  if (type.getElementTypeBitWidth() < 32) {
    update.flops += elements;
    update.bytes += elements * double(type.getElementTypeBitWidth() / 8);
  }
  update.launches = target == CostTarget::Cuda && !getGrad() ? 0 : 1;
  return {update};
}
