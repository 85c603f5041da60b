//===- FamilyConfig.h - what the job readers know of a model family --*- C++ -*-===//
//
// Internal to the frontend library. The part of a model family the job's readers need (the
// TOML reader, config.json's reader and writer, and their fuzz targets): its name, the
// config.json model_types it reads, and its config.json fields read and written. The
// family's graph is apart (ModelFamily.h), so that reading a job needs no dialect.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bertc/frontend/JobSpec.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"

namespace bertc {

class ConfigReader;

/// The [model] keys of decoder families only (FamilyConfig::decoderKeys).
inline constexpr llvm::StringRef kDecoderModelKeys[] = {"kv_heads", "head_dim", "rope_theta",
                                                        "tie_embeddings"};

/// A model family's config.json, read and written.
struct FamilyConfig {
  /// Its `[model] family` name ("bert").
  llvm::StringRef name;
  /// The config.json `model_type` values it reads.
  llvm::ArrayRef<llvm::StringRef> modelTypes;
  /// The file of a Hugging Face folder its text is tokenized with: "vocab.txt" (WordPiece)
  /// or "tokenizer.json".
  llvm::StringRef tokenizerFile;
  /// The task heads it builds ([head] task values).
  llvm::ArrayRef<llvm::StringRef> tasks;
  /// The decoder keys of [model] (kDecoderModelKeys) that it has: a rotary decoder all of
  /// them, GPT-2 tie_embeddings alone, BERT none.
  llvm::ArrayRef<llvm::StringRef> decoderKeys;
  /// The layers a [lora] table without `targets` adapts: PEFT's default target_modules for
  /// the model type.
  llvm::ArrayRef<llvm::StringRef> loraTargets;
  /// Reads the family's fields of a `from` folder's config.json into the spec.
  void (*readConfig)(ConfigReader &reader, ModelSpec &model, HeadSpec &head);
  /// Adds the family's fields (model_type, architectures, dimensions) to the config.json
  /// saved with a model trained on `spec`.
  void (*writeConfig)(const JobSpec &spec, llvm::json::Object &config);
};

/// bos_token_id and eos_token_id (one id, or a list) as read, where the model has them: the
/// decoders' config.json fields.
void writeSpecialTokenIds(const ModelSpec &model, llvm::json::Object &config);

/// The family named `name`, or null.
const FamilyConfig *findFamilyConfig(llvm::StringRef name);
/// The family that reads config.json's `modelType`, or null.
const FamilyConfig *findFamilyConfigOfModelType(llvm::StringRef modelType);
/// Every family's name, for `[model] family`'s choices.
llvm::SmallVector<llvm::StringRef> modelFamilyNames();

/// The families' configs (each in its family's *Config.cpp).
extern const FamilyConfig kBertConfig;
extern const FamilyConfig kLlamaConfig;
extern const FamilyConfig kQwen2Config;
extern const FamilyConfig kGpt2Config;

} // namespace bertc
