//===- HFConfigWriter.h - a job's model as a Hugging Face config ---*- C++ -*-===//
//
// The config.json that a trained model's folder carries, so that transformers'
// AutoModel / BertFor*.from_pretrained loads what bertc trained; and the adapter_config.json
// of LoRA adapters, which peft's PeftModel.from_pretrained reads (LoraConfig.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/frontend/JobSpec.h"

#include <string>

namespace bertc {

/// The Hugging Face config of `spec`'s model and head (a BertConfig, ...), as JSON text.
std::string huggingFaceConfigJson(const JobSpec &spec);

/// The adapter_config.json of `spec`'s LoRA adapters (PEFT's LoraConfig), whose layers are
/// `targetModules` (the last parts of their names, "q_proj"); "" without a [lora] table.
std::string adapterConfigJson(const JobSpec &spec, llvm::ArrayRef<std::string> targetModules);

} // namespace bertc
