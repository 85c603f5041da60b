"""Writes a forward .mlir stage ending in bert.lm_head_loss from the tiny-ner job's forward.

Keeps the module's attributes (the settings, bounds and config the job compiled into
them) and replaces @micro_step with a one-block decoder: embedding -> rms_norm ->
bias-less projection -> silu -> bias-less projection -> residual add -> the LM head loss
over the token labels, its weight the embedding table itself (tied embeddings: one
parameter, two gradients). The token labels (0, 1, 2 or -100) stand for next tokens of a
64-token vocabulary.
"""
import sys

STEP = """  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?x?xi32>
    %table = bert.param "model.embed_tokens.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<64x64xf32>
    %x = bert.embedding %ids, %table : (tensor<?x?xi32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %nw = bert.param "model.norm.weight" {decay = false, group = "embeddings", init = "ones", trainable = true} : tensor<64xf32>
    %n = bert.rms_norm %x, %nw {epsilon = 1.0e-05 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %wu = bert.param "mlp.up_proj.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<128x64xf32>
    %wd = bert.param "mlp.down_proj.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<64x128xf32>
    %up = bert.linear %n, %wu : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
    %s = bert.silu %up : (tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
    %d = bert.linear %s, %wd : (tensor<?x?x128xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
    %h = bert.add %d, %x : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    %loss = bert.lm_head_loss %h, %table, %labels : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<?x?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
"""

module_line = sys.stdin.readline()
sys.stdout.write(module_line + STEP)
