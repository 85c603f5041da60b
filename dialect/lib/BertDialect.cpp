//===- BertDialect.cpp - the bert dialect ---------------------------------===//
//
// Registers the dialect's ops and emits the tablegen'd dialect and interface code.
//
//===----------------------------------------------------------------------===//

#include "bert/BertDialect.h"

using namespace mlir;
using namespace mlir::bert;

#include "bert/BertDialect.cpp.inc"
#include "bert/BertInterfaces.cpp.inc"

void BertDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "bert/BertOps.cpp.inc"
      >();
}
