//===- FamilyConfig.cpp - the model families' configs, by name -----------===//

#include "FamilyConfig.h"

#include "llvm/ADT/STLExtras.h"

using namespace bertc;

namespace {

/// Every family, in the order `[model] family`'s choices list them.
llvm::ArrayRef<const FamilyConfig *> familyConfigs() {
  static const FamilyConfig *all[] = {&kBertConfig, &kLlamaConfig, &kQwen2Config, &kGpt2Config};
  return all;
}

} // namespace

const FamilyConfig *bertc::findFamilyConfig(llvm::StringRef name) {
  for (const FamilyConfig *family : familyConfigs())
    if (family->name == name)
      return family;
  return nullptr;
}

const FamilyConfig *bertc::findFamilyConfigOfModelType(llvm::StringRef modelType) {
  for (const FamilyConfig *family : familyConfigs())
    if (llvm::is_contained(family->modelTypes, modelType))
      return family;
  return nullptr;
}

llvm::SmallVector<llvm::StringRef> bertc::modelFamilyNames() {
  llvm::SmallVector<llvm::StringRef> names;
  for (const FamilyConfig *family : familyConfigs())
    names.push_back(family->name);
  return names;
}

void bertc::writeSpecialTokenIds(const ModelSpec &model, llvm::json::Object &config) {
  if (model.bosTokenId)
    config["bos_token_id"] = *model.bosTokenId;
  if (model.eosTokenIds.size() == 1)
    config["eos_token_id"] = model.eosTokenIds.front();
  else if (!model.eosTokenIds.empty())
    config["eos_token_id"] = llvm::json::Array(model.eosTokenIds);
}
