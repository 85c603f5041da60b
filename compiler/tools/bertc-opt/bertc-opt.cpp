//===- bertc-opt.cpp - runs bertc's passes on bert-dialect IR -------------===//

#include "bert/BertDialect.h"
#include "bertc/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::bert::BertDialect, mlir::func::FuncDialect>();
  bertc::registerBertcPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "bertc optimizer driver\n", registry));
}
