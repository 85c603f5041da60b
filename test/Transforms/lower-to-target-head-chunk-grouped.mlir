// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda attention-head-chunk=4" | FileCheck %s --check-prefix=FOUR
// RUN: bertc-opt %s -bertc-lower-to-target="target=cpu attention-head-chunk=1" | FileCheck %s --check-prefix=ONE
// RUN: bertc-opt %s -bertc-lower-to-target="target=cuda attention-head-chunk=7" | FileCheck %s --check-prefix=ALL

// 6 query heads over 2 key/value heads: groups of 3. A head chunk holds whole groups, so
// 4 becomes 3 (one group), 1 becomes 3 (at least one group), and 7 all 6 heads; both ops of
// the attention get the same chunk.
// FOUR: bert.attention {{.*}}head_chunk = 3 : i64
// FOUR: bert.attention_grad {{.*}}head_chunk = 3 : i64
// ONE: bert.attention {{.*}}head_chunk = 3 : i64
// ONE: bert.attention_grad {{.*}}head_chunk = 3 : i64
// ALL: bert.attention {{.*}}head_chunk = 6 : i64
// ALL: bert.attention_grad {{.*}}head_chunk = 6 : i64

func.func @attention(%q: tensor<?x?x48xbf16>, %kv: tensor<?x?x16xbf16>, %mask: tensor<?x?xi32>) -> tensor<?x?x48xbf16> {
  %a, %lse = bert.attention %q, %kv, %kv, %mask {heads = 6 : i64, kv_heads = 2 : i64, causal, dropout = 0.0 : f32, stream = 1 : i32} : (tensor<?x?x48xbf16>, tensor<?x?x16xbf16>, tensor<?x?x16xbf16>, tensor<?x?xi32>) -> (tensor<?x?x48xbf16>, tensor<?x6x?xf32>)
  %dq, %dk, %dv = bert.attention_grad %a, %q, %kv, %kv, %mask, %a, %lse {heads = 6 : i64, kv_heads = 2 : i64, causal, dropout = 0.0 : f32, stream = 1 : i32} : (tensor<?x?x48xbf16>, tensor<?x?x48xbf16>, tensor<?x?x16xbf16>, tensor<?x?x16xbf16>, tensor<?x?xi32>, tensor<?x?x48xbf16>, tensor<?x6x?xf32>) -> (tensor<?x?x48xbf16>, tensor<?x?x16xbf16>, tensor<?x?x16xbf16>)
  return %dq : tensor<?x?x48xbf16>
}
