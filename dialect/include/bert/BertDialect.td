//===- BertDialect.td - the bert dialect --------------------*- tablegen -*-===//
//
// The `bert` dialect: the ops a BERT encoder, its heads, its backward pass and its
// optimizer need, on tensors with value semantics.
//
//===----------------------------------------------------------------------===//

#ifndef BERT_DIALECT
#define BERT_DIALECT

include "mlir/IR/OpBase.td"

def Bert_Dialect : Dialect {
  let name = "bert";
  let cppNamespace = "::mlir::bert";
  let summary = "BERT fine-tuning graphs: forward, backward and optimizer";
  let description = [{
    Tensors are builtin ranked tensors. Activations carry the micro-batch and the
    sequence as dynamic dimensions, in that order: `tensor<?x?x768xf32>` is [batch,
    seq, hidden] and `tensor<?x2xf32>` is [batch, classes]. Their upper bounds are the
    module attributes `bert.max_batch` and `bert.max_seq`, so one plan serves every
    shorter batch. Parameters are static (`tensor<768x768xf32>`), named as in Hugging
    Face checkpoints.

    A training module holds `@micro_step` (forward, loss, backward, gradients
    accumulated into each parameter's gradient slot), after `-bertc-insert-optimizer`
    `@optimizer_step` (one update per trainable parameter) and, once planned,
    `@eval_step` (`-bertc-derive-eval-step`: the forward with dropout off).
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

#endif // BERT_DIALECT
