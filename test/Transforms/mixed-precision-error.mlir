// RUN: bertc-opt %s -split-input-file -verify-diagnostics -bertc-mixed-precision=precision=bf16

// The pass runs once: a module that already has a precision is refused.
// expected-error@below {{module already has a precision ("fp16")}}
module attributes {bert.precision = "fp16"} {
  func.func @micro_step() {
    return
  }
}
