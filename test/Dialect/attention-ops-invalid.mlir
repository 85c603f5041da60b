// RUN: bertc-opt %s -split-input-file -verify-diagnostics

// kv_heads must divide the heads.
func.func @kv_heads_not_dividing(%q: tensor<?x?x12xf32>, %kv: tensor<?x?x6xf32>, %m: tensor<?x?xi32>) {
  // expected-error @+1 {{kv_heads 2 must divide the 3 heads (0: as many as the heads)}}
  %c, %lse = bert.attention %q, %kv, %kv, %m {heads = 3 : i64, kv_heads = 2 : i64, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x12xf32>, tensor<?x?x6xf32>, tensor<?x?x6xf32>, tensor<?x?xi32>) -> (tensor<?x?x12xf32>, tensor<?x3x?xf32>)
  return
}

// -----

// More key/value heads than query heads.
func.func @kv_heads_above_heads(%q: tensor<?x?x8xf32>, %kv: tensor<?x?x16xf32>, %m: tensor<?x?xi32>) {
  // expected-error @+1 {{kv_heads 4 must divide the 2 heads}}
  %c, %lse = bert.attention %q, %kv, %kv, %m {heads = 2 : i64, kv_heads = 4 : i64, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x8xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
  return
}

// -----

func.func @kv_heads_negative(%q: tensor<?x?x8xf32>, %m: tensor<?x?xi32>) {
  // expected-error @+1 {{kv_heads -1 must divide the 2 heads}}
  %c, %lse = bert.attention %q, %q, %q, %m {heads = 2 : i64, kv_heads = -1 : i64, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x2x?xf32>)
  return
}

// -----

// 4 heads of 8 dims over 2 key/value heads: the key needs 16 features, not 32.
func.func @key_features(%q: tensor<?x?x32xf32>, %m: tensor<?x?xi32>) {
  // expected-error @+1 {{key 'tensor<?x?x32xf32>' must have kv_heads * head dim = 2 * 8 features}}
  %c, %lse = bert.attention %q, %q, %q, %m {heads = 4 : i64, kv_heads = 2 : i64, causal, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?xi32>) -> (tensor<?x?x32xf32>, tensor<?x4x?xf32>)
  return
}

// -----

// Without kv_heads the key is as wide as the query.
func.func @key_features_default(%q: tensor<?x?x32xf32>, %kv: tensor<?x?x16xf32>, %m: tensor<?x?xi32>) {
  // expected-error @+1 {{key 'tensor<?x?x16xf32>' must have kv_heads * head dim = 4 * 8 features}}
  %c, %lse = bert.attention %q, %kv, %kv, %m {heads = 4 : i64, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x32xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?xi32>) -> (tensor<?x?x32xf32>, tensor<?x4x?xf32>)
  return
}

// -----

func.func @key_value_types(%q: tensor<?x?x32xf32>, %k: tensor<?x?x16xf32>, %v: tensor<?x?x8xf32>, %m: tensor<?x?xi32>) {
  // expected-error @+1 {{key 'tensor<?x?x16xf32>' and value 'tensor<?x?x8xf32>' must have the same type}}
  %c, %lse = bert.attention %q, %k, %v, %m {heads = 4 : i64, kv_heads = 2 : i64, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x32xf32>, tensor<?x?x16xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> (tensor<?x?x32xf32>, tensor<?x4x?xf32>)
  return
}

// -----

func.func @key_element_type(%q: tensor<?x?x32xf32>, %kv: tensor<?x?x16xbf16>, %m: tensor<?x?xi32>) {
  // expected-error @+1 {{query 'tensor<?x?x32xf32>' and key 'tensor<?x?x16xbf16>' must have the same element type}}
  %c, %lse = bert.attention %q, %kv, %kv, %m {heads = 4 : i64, kv_heads = 2 : i64, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x32xf32>, tensor<?x?x16xbf16>, tensor<?x?x16xbf16>, tensor<?x?xi32>) -> (tensor<?x?x32xf32>, tensor<?x4x?xf32>)
  return
}

// -----

func.func @key_batch(%q: tensor<2x?x32xf32>, %kv: tensor<3x?x16xf32>, %m: tensor<?x?xi32>) {
  // expected-error @+1 {{key 'tensor<3x?x16xf32>' must have the batch and seq of query 'tensor<2x?x32xf32>'}}
  %c, %lse = bert.attention %q, %kv, %kv, %m {heads = 4 : i64, kv_heads = 2 : i64, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<2x?x32xf32>, tensor<3x?x16xf32>, tensor<3x?x16xf32>, tensor<?x?xi32>) -> (tensor<2x?x32xf32>, tensor<2x4x?xf32>)
  return
}

// -----

// A head chunk holds whole groups: 4 heads over 2 key/value heads come 2 at a time.
func.func @head_chunk_splits_group(%q: tensor<?x?x32xf32>, %kv: tensor<?x?x16xf32>, %m: tensor<?x?xi32>) {
  // expected-error @+1 {{head_chunk 3 must be a multiple of heads / kv_heads = 2 (whole key/value groups)}}
  %c, %lse = bert.attention %q, %kv, %kv, %m {heads = 4 : i64, kv_heads = 2 : i64, head_chunk = 3 : i64, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x32xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?xi32>) -> (tensor<?x?x32xf32>, tensor<?x4x?xf32>)
  return
}

// -----

// The gradients of the key and value have their types, not the query's.
func.func @grad_key_gradient(%q: tensor<?x?x32xf32>, %kv: tensor<?x?x16xf32>, %m: tensor<?x?xi32>, %lse: tensor<?x4x?xf32>) {
  // expected-error @+1 {{key 'tensor<?x?x16xf32>' and key gradient 'tensor<?x?x32xf32>' must have the same type}}
  %dq, %dk, %dv = bert.attention_grad %q, %q, %kv, %kv, %m, %q, %lse {heads = 4 : i64, kv_heads = 2 : i64, causal, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?xi32>, tensor<?x?x32xf32>, tensor<?x4x?xf32>) -> (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x16xf32>)
  return
}

// -----

func.func @grad_kv_heads(%q: tensor<?x?x32xf32>, %kv: tensor<?x?x16xf32>, %m: tensor<?x?xi32>, %lse: tensor<?x4x?xf32>) {
  // expected-error @+1 {{kv_heads 3 must divide the 4 heads}}
  %dq, %dk, %dv = bert.attention_grad %q, %q, %kv, %kv, %m, %q, %lse {heads = 4 : i64, kv_heads = 3 : i64, dropout = 0.0 : f32, stream = 0 : i32} : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?xi32>, tensor<?x?x32xf32>, tensor<?x4x?xf32>) -> (tensor<?x?x32xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>)
  return
}
