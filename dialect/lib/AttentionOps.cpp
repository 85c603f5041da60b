//===- AttentionOps.cpp - verifiers of attention and its gradient ---------===//
//
// What the attention kernels rely on: query [batch, seq, heads * d], key and value
// [batch, seq, kv_heads * d] with kv_heads dividing heads, the lse [batch, heads, seq],
// and a head chunk of whole key/value groups. Each diagnostic names the attribute or
// operand and both sizes (VerifierChecks.h).
//
//===----------------------------------------------------------------------===//

#include "VerifierChecks.h"

using namespace mlir;
using namespace mlir::bert;
using namespace mlir::bert::verify;

/// Fails unless query, key and value are rank 3 of one element type, key and value of one
/// type, with the query's batch and seq; the query's features split into `heads` heads of d
/// dims, `kvHeads` (0 meaning heads) divides heads, and key and value end in kv_heads * d.
static LogicalResult expectAttentionShapes(Operation *op, Value query, Value key, Value value,
                                           Value mask, int64_t heads, int64_t kvHeads) {
  if (failed(expectRank(op, query, "query", 3)) || failed(expectRank(op, key, "key", 3)) ||
      failed(expectRank(op, mask, "mask", 2)) ||
      failed(expectSameType(op, key, "key", value, "value")))
    return failure();
  auto q = tensorType(query), k = tensorType(key);
  if (q.getElementType() != k.getElementType())
    return op->emitOpError() << "query " << query.getType() << " and key " << key.getType()
                             << " must have the same element type";
  for (int64_t dim : {0, 1})
    if (!ShapedType::isDynamic(q.getDimSize(dim)) && !ShapedType::isDynamic(k.getDimSize(dim)) &&
        q.getDimSize(dim) != k.getDimSize(dim))
      return op->emitOpError() << "key " << key.getType()
                               << " must have the batch and seq of query " << query.getType();
  int64_t hidden = lastDim(query);
  if (heads <= 0 || (!ShapedType::isDynamic(hidden) && hidden % heads != 0))
    return op->emitOpError() << "hidden size " << hidden << " is not divisible by " << heads
                             << " heads";
  if (kvHeads < 0 || kvHeads > heads || (kvHeads > 0 && heads % kvHeads != 0))
    return op->emitOpError() << "kv_heads " << kvHeads << " must divide the " << heads
                             << " heads (0: as many as the heads)";
  int64_t keyValueHeads = kvHeads ? kvHeads : heads, kvFeatures = lastDim(key);
  if (ShapedType::isDynamic(hidden) || ShapedType::isDynamic(kvFeatures) ||
      kvFeatures == keyValueHeads * (hidden / heads))
    return success();
  return op->emitOpError() << "key " << key.getType()
                           << " must have kv_heads * head dim = " << keyValueHeads << " * "
                           << hidden / heads << " features";
}

/// Fails unless an attention op's head chunk is 0 (the fused kernel) or whole key/value
/// groups of at most its heads, and unless `tf32` marks fp32 GEMMs: tensor-core attention
/// (head_chunk > 0) on fp32 `query`.
static LogicalResult expectAttentionKernel(Operation *op, int64_t headChunk, int64_t heads,
                                           int64_t keyValueHeads, bool tf32, Value query) {
  if (headChunk < 0 || headChunk > heads)
    return op->emitOpError() << "head_chunk " << headChunk << " must be 0 (fused) or 1 to " << heads
                             << " (the heads)";
  int64_t group = heads / keyValueHeads;
  if (headChunk % group != 0)
    return op->emitOpError() << "head_chunk " << headChunk << " must be a multiple of heads / "
                             << "kv_heads = " << group << " (whole key/value groups)";
  if (tf32 && headChunk == 0)
    return op->emitOpError() << "has tf32 but head_chunk 0: the fused kernel has no GEMMs";
  return expectTf32Operand(op, tf32, query);
}

/// Fails unless `lse` is [batch, heads, seq] for a [batch, seq, hidden] `query`.
static LogicalResult expectLseShape(Operation *op, Value query, Value lse, int64_t heads) {
  auto q = tensorType(query).getShape();
  auto l = tensorType(lse).getShape();
  if (l.size() == 3 && l[0] == q[0] && l[1] == heads && l[2] == q[1])
    return success();
  return op->emitOpError() << "lse " << lse.getType() << " must be [batch, " << heads
                           << " heads, seq] of query " << query.getType();
}

LogicalResult AttentionOp::verify() {
  if (failed(expectAttentionShapes(*this, getQuery(), getKey(), getValue(), getMask(), getHeads(),
                                   getKvHeads())) ||
      failed(expectSameType(*this, getQuery(), "query", getResult(), "result")) ||
      failed(expectRate(*this, "dropout", getDropout().convertToFloat())) ||
      failed(expectAttentionKernel(*this, getHeadChunk(), getHeads(), getKeyValueHeads(), getTf32(),
                                   getQuery())))
    return failure();
  return expectLseShape(*this, getQuery(), getLse(), getHeads());
}

LogicalResult AttentionGradOp::verify() {
  if (failed(expectAttentionShapes(*this, getQuery(), getKey(), getValue(), getMask(), getHeads(),
                                   getKvHeads())))
    return failure();
  for (Value grad : {getResultGrad(), getQueryGrad()})
    if (failed(expectSameType(*this, getQuery(), "query", grad, "gradient")))
      return failure();
  if (failed(expectSameType(*this, getKey(), "key", getKeyGrad(), "key gradient")) ||
      failed(expectSameType(*this, getValue(), "value", getValueGrad(), "value gradient")) ||
      failed(expectSameType(*this, getQuery(), "query", getOutput(), "output")) ||
      failed(expectLseShape(*this, getQuery(), getLse(), getHeads())) ||
      failed(expectAttentionKernel(*this, getHeadChunk(), getHeads(), getKeyValueHeads(), getTf32(),
                                   getQuery())))
    return failure();
  return expectRate(*this, "dropout", getDropout().convertToFloat());
}

/// The head dimension of a grouped-query attention op, else 0.
template <typename AttentionLikeOp> static int64_t groupedHeadDim(AttentionLikeOp op) {
  int64_t heads = op.getHeads();
  return op.getKeyValueHeads() < heads ? lastDim(op.getQuery()) / heads : 0;
}

int64_t AttentionOp::getGroupedHeadDim() { return groupedHeadDim(*this); }
int64_t AttentionGradOp::getGroupedHeadDim() { return groupedHeadDim(*this); }
