//===- bertc-import.cpp - prints the bert IR of a job's TOML file ---------===//
//
// `bertc-import model.toml [--micro-batch N]` runs the frontend alone: the TOML file
// becomes a JobSpec, then the forward graph, printed as MLIR. Diagnostics go to stderr
// as `model.toml:7:1: error: ...`, and the exit status is 1 when there is any.
//
//===----------------------------------------------------------------------===//

#include "bertc/frontend/GraphBuilder.h"
#include "bertc/frontend/TomlFrontend.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

static cl::opt<std::string> jobFile(cl::Positional, cl::Required, cl::desc("<job .toml file>"));
static cl::opt<int64_t>
    microBatch("micro-batch", cl::init(0),
               cl::desc("rows per micro-batch (bert.max_batch); default: [train] batch"));

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  cl::ParseCommandLineOptions(argc, argv, "bertc frontend: TOML job -> bert dialect IR\n");

  mlir::MLIRContext ctx;
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);

  mlir::FailureOr<bertc::JobSpec> spec = bertc::parseJobFile(jobFile, ctx);
  if (mlir::failed(spec))
    return 1;
  int64_t rows = microBatch > 0 ? int64_t(microBatch) : spec->train.batch;
  mlir::OwningOpRef<mlir::ModuleOp> module = bertc::buildTrainGraph(*spec, rows, ctx);
  if (!module)
    return 1;
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}
