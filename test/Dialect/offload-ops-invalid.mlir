// RUN: bertc-opt %s -split-input-file -verify-diagnostics

func.func @host_copy_read_on_device(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{result lives in host memory: only bert.reload may read it, not 'bert.gelu'}}
  %h = bert.offload %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %y = bert.gelu %h : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @reload_without_offload(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{input must be the host copy a bert.offload makes}}
  %y = bert.reload %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @type_changed(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %h = bert.offload %x : (tensor<?x8xf32>) -> tensor<?x8xbf16>
  return
}
