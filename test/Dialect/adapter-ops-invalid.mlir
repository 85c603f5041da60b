// RUN: bertc-opt %s -split-input-file -verify-diagnostics

func.func @infinite_factor(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{factor must be finite}}
  %y = bert.scale %x {factor = 0x7F800000 : f32} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @shape_changed(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %y = bert.scale %x {factor = 1.0 : f32} : (tensor<?x8xf32>) -> tensor<?x4xf32>
  return
}
