//===- BertAttributes.td - the bert dialect's attributes ----*- tablegen -*-===//
//
// The facts a training module carries between passes and into codegen, as typed
// attributes with verifiers: the [train] settings (`bert.train`), the memory plan
// (`bert.plan`) and each parameter's slots in it (`bert.slots`); and, from BertEnums.td, the
// enumerations ops take (`#bert.gelu_approximation`).
//
//===----------------------------------------------------------------------===//

#ifndef BERT_ATTRIBUTES
#define BERT_ATTRIBUTES

include "mlir/IR/AttrTypeBase.td"
include "bert/BertDialect.td"
include "bert/BertEnums.td"

class Bert_Attr<string name, string attrMnemonic> : AttrDef<Bert_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def Bert_ByteRangeParameter : AttrParameter<"::mlir::bert::ByteRange",
                                            "[offset, bytes] of the arena"> {
  let printer = "$_printer << '[' << $_self.offset << \", \" << $_self.bytes << ']'";
  let parser = "::mlir::bert::parseByteRange($_parser)";
}

def Bert_OptionalByteRangeParameter : AttrParameter<"::mlir::bert::ByteRange",
                                                    "[offset, bytes] of the arena, or none"> {
  let printer = "$_printer << '[' << $_self.offset << \", \" << $_self.bytes << ']'";
  let parser = "::mlir::bert::parseByteRange($_parser)";
  let defaultValue = "::mlir::bert::ByteRange{}";
}

def Bert_TrainAttr : Bert_Attr<"Train", "train"> {
  let summary = "the [train] settings a trainer is compiled with";
  let description = [{
    One value per `BERTC_SETTING` of `bertc/abi/train_settings.def`, keyed as there and
    printed in its order; the three the plan decides (micro_batch, accumulation, seq_len)
    are not here. Every key is required: a missing one is a parse error that names it.

    ```mlir
    bert.train = #bert.train<batch = 32, epochs = 3, steps = 0, lr = 2.0e-05, ...,
                             schedule = "linear", task = "classification", ...>
    ```
  }];
  let parameters = (ins "::mlir::bert::TrainValues":$values);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Bert_PlanAttr : Bert_Attr<"Plan", "plan"> {
  let summary = "the memory plan: one arena, its regions and where the loss is";
  let description = [{
    Written by `-bertc-plan-buffers`. Each region is `[offset, bytes]` of the arena,
    inside it; `lower_bound_bytes` is the fixed regions plus the most activation bytes
    live at once (what any packing needs); `loss` is the offset of the value
    `@micro_step` returns. That regions are disjoint and hold their slots is checked
    against the IR by `-bertc-verify-budget`.

    The arena's last `host_bytes` live in host memory, not on the device: the fp32
    masters of frozen 16-bit parameters (`frozen_masters`), which only initialisation
    and checkpoints touch, and, with the optimizer offloaded to the host
    (`-bertc-plan-buffers`'s offload-optimizer), the master weights and the optimizer
    state, which only the host's AdamW touches. The device holds the first
    `arena_bytes - host_bytes` (the device arena); `lower_bound_bytes` and `loss` are of
    the device arena. With checkpoints offloaded (`-bertc-rematerialize`'s
    offload-checkpoints), the host copies `bert.offload` makes lie in
    `host_activations`, before the frozen masters, one slot each. With embedding tables in
    host memory (`-bertc-plan-buffers`'s host-embeddings), the values of the frozen tables
    that only gathers read lie in `host_parameters`, after the host copies: the device's
    gathers read the batch's rows from them in place. `host_bytes`, `frozen_masters`,
    `host_activations` and `host_parameters` are printed only when not 0.
  }];
  let parameters = (ins
    "int64_t":$arena_bytes,
    Bert_ByteRangeParameter:$parameters,
    Bert_ByteRangeParameter:$master_weights,
    Bert_ByteRangeParameter:$gradients,
    Bert_ByteRangeParameter:$optimizer_state,
    Bert_ByteRangeParameter:$scratch,
    Bert_ByteRangeParameter:$inputs,
    Bert_ByteRangeParameter:$activations,
    Bert_ByteRangeParameter:$gemm_workspace,
    "int64_t":$lower_bound_bytes,
    "int64_t":$loss,
    DefaultValuedParameter<"int64_t", "0">:$host_bytes,
    Bert_OptionalByteRangeParameter:$frozen_masters,
    Bert_OptionalByteRangeParameter:$host_activations,
    Bert_OptionalByteRangeParameter:$host_parameters
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The regions with their names, in the arena's order.
    llvm::SmallVector<std::pair<llvm::StringRef, ByteRange>, 11> getRegions() const;
    /// The bytes the device holds: the arena less its host-resident end.
    int64_t getDeviceBytes() const { return getArenaBytes() - getHostBytes(); }
  }];
}

def Bert_ParamSlotsAttr : Bert_Attr<"ParamSlots", "param_slots"> {
  let summary = "a parameter's slots in the arena";
  let description = [{
    Written by `-bertc-plan-buffers` on each `bert.param` as its `bert.slots`: the byte
    offset of its value (in its storage type), of its fp32 master when stored in 16 bits,
    and, when trainable, of its fp32 gradient and its AdamW moments (with 8-bit state,
    the moments' u8 codes and their absmaxes). Read through `bert/Placement.h`.

    ```mlir
    %w = bert.param "classifier.weight" {bert.slots = #bert.param_slots<value = 0,
        grad = 512, adam_m = 1024, adam_v = 1536>, ...} : tensor<2x64xf32>
    ```
  }];
  let parameters = (ins
    "int64_t":$value,
    OptionalParameter<"std::optional<int64_t>">:$master,
    OptionalParameter<"std::optional<int64_t>">:$grad,
    OptionalParameter<"std::optional<int64_t>">:$adam_m,
    OptionalParameter<"std::optional<int64_t>">:$adam_v,
    OptionalParameter<"std::optional<int64_t>">:$adam_m_absmax,
    OptionalParameter<"std::optional<int64_t>">:$adam_v_absmax
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Bert_QuantizedWeightAttr : Bert_Attr<"QuantizedWeight", "quantized"> {
  let summary = "a frozen weight stored quantized: its format and the shape it stands for";
  let description = [{
    QLoRA's NF4 (blocks of 64 values, with or without double quantization of the
    absmaxes) or LLM.int8()'s int8 rows, over the row-major values of a matrix of
    `shape` ([out, in], as a linear layer reads it), laid out as
    `bertc/abi/quantized_weight_layout.h` says: `bytes()` of them, which the parameter's
    `tensor<Nxi8>` holds.

    ```mlir
    %q = bert.param "model.layers.0.mlp.up_proj.weight" {quantized = #bert.quantized<nf4_double_quant, [96, 64]>, ...}
        : tensor<3904xi8>
    ```
  }];
  let parameters = (ins EnumParameter<Bert_WeightFormat>:$format,
                        ArrayRefParameter<"int64_t">:$shape);
  let assemblyFormat = "`<` $format `,` `[` $shape `]` `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The values the weight stands for: the product of its shape.
    int64_t getNumValues() const;
    /// The bytes of its layout (quantized_weight_layout.h).
    int64_t getBytes() const;
  }];
}

#endif // BERT_ATTRIBUTES
