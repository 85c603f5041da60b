//===- bertc-opt.cpp - runs bertc's passes on bert-dialect IR -------------===//

#include "bert/BertDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::bert::BertDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "bertc optimizer driver\n", registry));
}
