//===- ModelFamily.cpp - the frontend's model families, by name ----------===//

#include "ModelFamily.h"

using namespace bertc;

namespace {

/// Every family, in the order `[model] family`'s choices list them.
llvm::ArrayRef<const ModelFamily *> families() {
  static const ModelFamily *all[] = {&bertFamily(), &llamaFamily(), &qwen2Family(), &gpt2Family()};
  return all;
}

} // namespace

const ModelFamily *bertc::findModelFamily(llvm::StringRef name) {
  for (const ModelFamily *family : families())
    if (family->name() == name)
      return family;
  return nullptr;
}
