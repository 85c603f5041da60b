//===- HFConfigWriter.h - a job's model as a Hugging Face config ---*- C++ -*-===//
//
// The config.json that a trained model's folder carries, so that transformers'
// AutoModel / BertFor*.from_pretrained loads what bertc trained.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/frontend/JobSpec.h"

#include <string>

namespace bertc {

/// The Hugging Face config of `spec`'s model and head (a BertConfig, ...), as JSON text.
std::string huggingFaceConfigJson(const JobSpec &spec);

} // namespace bertc
