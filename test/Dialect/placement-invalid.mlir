// RUN: bertc-opt %s -split-input-file -verify-diagnostics

// The plan's placement attributes are checked where they are written
// (BertDialect::verifyOperationAttribute, bert/Placement.h).

func.func @slots_on_an_op_that_is_no_parameter() {
  // expected-error@+1 {{'bert.input' op 'bert.slots' must be a #bert.param_slots on a bert.param}}
  %0 = bert.input "input_ids" {bert.slots = #bert.param_slots<value = 0>} : tensor<?x?xi32>
  return
}

// -----

func.func @slots_that_are_no_param_slots() {
  // expected-error@+1 {{'bert.param' op 'bert.slots' must be a #bert.param_slots on a bert.param}}
  %0 = bert.param "w" {bert.slots = 0 : i64, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
  return
}

// -----

func.func @a_slot_before_the_arena() {
  // expected-error@+1 {{a parameter's grad slot must be at an offset of at least 0, got -64}}
  %0 = bert.param "w" {bert.slots = #bert.param_slots<value = 0, grad = -64>, decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x8xf32>
  return
}

// -----

func.func @an_offset_per_result() {
  %0 = bert.input "input_ids" {bert.offsets = array<i64: 0>} : tensor<?x?xi32>
  // One offset for the embedding's one result, not two.
  %1 = bert.param "t" {bert.slots = #bert.param_slots<value = 64>, decay = true, group = "embeddings", init = "normal", trainable = false} : tensor<16x8xf32>
  // expected-error@+1 {{'bert.embedding' op 'bert.offsets' must be an array<i64> of 1 offsets, one per result}}
  %2 = bert.embedding %0, %1 {bert.offsets = array<i64: 576, 640>} : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @a_negative_result_offset() {
  // expected-error@+1 {{'bert.input' op 'bert.offsets' must hold offsets of at least 0}}
  %0 = bert.input "input_ids" {bert.offsets = array<i64: -8>} : tensor<?x?xi32>
  return
}

// -----

func.func @a_workspace_that_is_no_offset(%x: tensor<?x?x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error@+1 {{'bert.layernorm' op 'bert.workspace' must be an i64 offset of at least 0}}
  %0 = bert.layernorm %x, %g, %b {epsilon = 1.0e-12 : f32, bert.workspace = -4 : i64} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return
}
