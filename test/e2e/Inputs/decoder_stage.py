"""Writes a forward .mlir stage of Llama-family ops from the tiny job's forward stage.

Keeps the module's attributes (the settings, bounds and config the job compiled into
them) and replaces @micro_step with: embedding -> rms_norm -> SiLU-gated MLP (silu(gate)
* up, down) -> rope on a projection -> the second token's features (at position 1: the
first token's, at 0, are not rotated) -> classifier -> cross_entropy over the tiny task's
two classes.
"""
import sys

STEP = """  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %pos = bert.input "position_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %table = bert.param "model.embed_tokens.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<64x64xf32>
    %x = bert.embedding %ids, %table : (tensor<?x?xi32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %nw = bert.param "model.norm.weight" {decay = false, group = "embeddings", init = "ones", trainable = true} : tensor<64xf32>
    %n = bert.rms_norm %x, %nw {epsilon = 1.0e-05 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %wg = bert.param "mlp.gate_proj.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<128x64xf32>
    %wu = bert.param "mlp.up_proj.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<128x64xf32>
    %wd = bert.param "mlp.down_proj.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<64x128xf32>
    %b128 = bert.param "mlp.bias" {decay = false, group = "embeddings", init = "zeros", trainable = false} : tensor<128xf32>
    %b64 = bert.param "proj.bias" {decay = false, group = "embeddings", init = "zeros", trainable = false} : tensor<64xf32>
    %gate = bert.linear %n, %wg, %b128 : (tensor<?x?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
    %up = bert.linear %n, %wu, %b128 : (tensor<?x?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
    %s = bert.silu %gate : (tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
    %h = bert.mul %s, %up : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
    %d = bert.linear %h, %wd, %b64 : (tensor<?x?x128xf32>, tensor<64x128xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %wq = bert.param "q_proj.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<64x64xf32>
    %q = bert.linear %d, %wq, %b64 : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %r = bert.rope %q, %pos {heads = 4 : i64, inv_freq = array<f32: 1.0, 0.316227764, 0.1, 0.0316227764, 0.01, 0.00316227764, 0.001, 0.000316227764>} : (tensor<?x?x64xf32>, tensor<?x?xi32>) -> tensor<?x?x64xf32>
    %second = bert.select_token %r {index = 1 : i64} : (tensor<?x?x64xf32>) -> tensor<?x64xf32>
    %wc = bert.param "classifier.weight" {decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x64xf32>
    %bc = bert.param "classifier.bias" {decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
    %logits = bert.linear %second, %wc, %bc : (tensor<?x64xf32>, tensor<2x64xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
"""

module_line = sys.stdin.readline()
sys.stdout.write(module_line + STEP)
