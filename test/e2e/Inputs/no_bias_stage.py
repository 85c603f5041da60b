"""Writes a forward .mlir stage whose projections have no bias from the tiny job's forward.

Keeps the module's attributes (the settings, bounds and config the job compiled into
them) and replaces @micro_step with: embedding -> rms_norm -> bias-less gate and up
projections, silu(gate) * up -> bias-less down projection -> the second token's features
-> a bias-less classifier -> cross_entropy over the tiny task's two classes: every
linear as torch.nn.Linear(bias=False), as in a Llama block.
"""
import sys

STEP = """  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %table = bert.param "model.embed_tokens.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<64x64xf32>
    %x = bert.embedding %ids, %table : (tensor<?x?xi32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %nw = bert.param "model.norm.weight" {decay = false, group = "embeddings", init = "ones", trainable = true} : tensor<64xf32>
    %n = bert.rms_norm %x, %nw {epsilon = 1.0e-05 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %wg = bert.param "mlp.gate_proj.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<128x64xf32>
    %wu = bert.param "mlp.up_proj.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<128x64xf32>
    %wd = bert.param "mlp.down_proj.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<64x128xf32>
    %gate = bert.linear %n, %wg : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
    %up = bert.linear %n, %wu : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
    %s = bert.silu %gate : (tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
    %h = bert.mul %s, %up : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
    %d = bert.linear %h, %wd : (tensor<?x?x128xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
    %second = bert.select_token %d {index = 1 : i64} : (tensor<?x?x64xf32>) -> tensor<?x64xf32>
    %wc = bert.param "classifier.weight" {decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x64xf32>
    %logits = bert.linear %second, %wc : (tensor<?x64xf32>, tensor<2x64xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
"""

module_line = sys.stdin.readline()
sys.stdout.write(module_line + STEP)
