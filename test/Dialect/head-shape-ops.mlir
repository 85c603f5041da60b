// RUN: bertc-opt %s | bertc-opt | FileCheck %s
// The pooling and feature-shaping ops print and parse back.

// CHECK-LABEL: func.func @join
func.func @join(%h: tensor<?x?x8xf32>, %mask: tensor<?x?xi32>, %dy: tensor<?x6xf32>) -> tensor<?x?x8xf32> {
  // CHECK: bert.max_tokens %{{.*}}, %{{.*}} : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x8xf32>
  %top = bert.max_tokens %h, %mask : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x8xf32>
  %cls = bert.select_token %h {index = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
  // CHECK: bert.concat %{{.*}}, %{{.*}} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
  %both = bert.concat %cls, %top : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
  // CHECK: bert.slice %{{.*}} {start = 10 : i64} : (tensor<?x16xf32>) -> tensor<?x6xf32>
  %part = bert.slice %both {start = 10 : i64} : (tensor<?x16xf32>) -> tensor<?x6xf32>
  // CHECK: bert.slice_grad %{{.*}} {start = 10 : i64} : (tensor<?x6xf32>) -> tensor<?x16xf32>
  %dboth = bert.slice_grad %dy {start = 10 : i64} : (tensor<?x6xf32>) -> tensor<?x16xf32>
  // CHECK: bert.concat_grad %{{.*}} {start = 8 : i64} : (tensor<?x16xf32>) -> tensor<?x8xf32>
  %dtop = bert.concat_grad %dboth {start = 8 : i64} : (tensor<?x16xf32>) -> tensor<?x8xf32>
  // CHECK: bert.max_tokens_grad
  %dh = bert.max_tokens_grad %dtop, %h, %mask : (tensor<?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return %dh : tensor<?x?x8xf32>
}
