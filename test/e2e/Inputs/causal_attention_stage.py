"""Writes a forward .mlir stage of a decoder's attention from the tiny job's forward stage.

Keeps the module's attributes (the settings, bounds and config the job compiled into
them) and replaces @micro_step with: embedding -> q, k, v projections (4 query heads of
16 dims over 2 key/value heads: k and v are 32 wide) -> causal grouped-query attention
(dropout 0.1) -> output projection -> the mean of each row's real tokens -> classifier ->
cross_entropy over the tiny task's two classes.
"""
import sys

STEP = """  func.func @micro_step() -> tensor<f32> {
    %ids = bert.input "input_ids" : tensor<?x?xi32>
    %mask = bert.input "attention_mask" : tensor<?x?xi32>
    %labels = bert.input "labels" : tensor<?xi32>
    %table = bert.param "model.embed_tokens.weight" {decay = true, group = "embeddings", init = "normal", trainable = true} : tensor<64x64xf32>
    %x = bert.embedding %ids, %table : (tensor<?x?xi32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %wq = bert.param "self_attn.q_proj.weight" {decay = true, group = "layers", init = "normal", trainable = true} : tensor<64x64xf32>
    %wk = bert.param "self_attn.k_proj.weight" {decay = true, group = "layers", init = "normal", trainable = true} : tensor<32x64xf32>
    %wv = bert.param "self_attn.v_proj.weight" {decay = true, group = "layers", init = "normal", trainable = true} : tensor<32x64xf32>
    %wo = bert.param "self_attn.o_proj.weight" {decay = true, group = "layers", init = "normal", trainable = true} : tensor<64x64xf32>
    %b64 = bert.param "self_attn.q_proj.bias" {decay = false, group = "layers", init = "zeros", trainable = true} : tensor<64xf32>
    %b32 = bert.param "self_attn.kv_proj.bias" {decay = false, group = "layers", init = "zeros", trainable = false} : tensor<32xf32>
    %q = bert.linear %x, %wq, %b64 : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %k = bert.linear %x, %wk, %b32 : (tensor<?x?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
    %v = bert.linear %x, %wv, %b32 : (tensor<?x?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
    %ctx, %lse = bert.attention %q, %k, %v, %mask {heads = 4 : i64, kv_heads = 2 : i64, causal, dropout = 0.1 : f32, stream = 1 : i32} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?xi32>) -> (tensor<?x?x64xf32>, tensor<?x4x?xf32>)
    %o = bert.linear %ctx, %wo, %b64 : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %pooled = bert.mean_tokens %o, %mask : (tensor<?x?x64xf32>, tensor<?x?xi32>) -> tensor<?x64xf32>
    %wc = bert.param "classifier.weight" {decay = true, group = "classifier", init = "normal", trainable = true} : tensor<2x64xf32>
    %bc = bert.param "classifier.bias" {decay = false, group = "classifier", init = "zeros", trainable = true} : tensor<2xf32>
    %logits = bert.linear %pooled, %wc, %bc : (tensor<?x64xf32>, tensor<2x64xf32>, tensor<2xf32>) -> tensor<?x2xf32>
    %loss = bert.cross_entropy %logits, %labels : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
"""

module_line = sys.stdin.readline()
sys.stdout.write(module_line + STEP)
