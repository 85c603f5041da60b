// Hugging Face's sharded safetensors checkpoints, read and written as transformers does:
// a model too large for one file of the maximum shard size is split into
// model-00001-of-0000K.safetensors ... and model.safetensors.index.json, whose weight_map
// names each tensor's shard and whose metadata.total_size counts the tensor bytes. A model
// that fits stays one model.safetensors. Every error names the index or shard file and,
// where there is one, the tensor.
#pragma once

#include "bertc/runtime/safetensors.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bertc {

/// A model folder's weights in one file, and the index of a sharded one.
inline constexpr const char *kModelSafetensorsName = "model.safetensors";
inline constexpr const char *kModelSafetensorsIndexName = "model.safetensors.index.json";

/// The largest shard save_pretrained writes by default: "5GB", 5 * 10^9 bytes.
inline constexpr uint64_t kDefaultMaxShardBytes = 5'000'000'000;

/// What model.safetensors.index.json says.
struct SafetensorsIndex {
  uint64_t totalSize = 0; ///< metadata.total_size: bytes of tensor data (0 where absent)
  std::map<std::string, std::string> weightMap; ///< tensor name -> shard file name
};

/// Parses the text of the index `path`. Throws SafetensorsError naming `path` (and the
/// tensor, where one is at fault) for JSON that is malformed (with its line and column),
/// nested too deep or not an object, a missing "weight_map" object, a tensor listed twice,
/// and a shard that is not a string naming a file beside the index ("../x", "a/b", "").
SafetensorsIndex parseSafetensorsIndex(std::string_view text, const std::string &path);

/// The index's text as transformers writes it: json.dumps(index, indent=2, sort_keys=True)
/// and a newline.
std::string formatSafetensorsIndex(const SafetensorsIndex &index);

/// Groups tensors of `tensorBytes` bytes, taken in that order, into shards of at most
/// `maxShardBytes` as huggingface_hub's split_state_dict_into_shards_factory does:
///  1. a tensor larger than the limit is a shard of its own, appended at once, after the
///     shards closed so far and before the one being filled;
///  2. a tensor that would take the shard being filled past the limit closes it, and
///     starts the next;
///  3. any other tensor joins the shard being filled, which is the last shard at the end.
/// Returns the tensors' indices, shard by shard; one shard (or none, without tensors)
/// means the model is saved unsharded.
std::vector<std::vector<size_t>> groupIntoShards(const std::vector<uint64_t> &tensorBytes,
                                                 uint64_t maxShardBytes);

/// "model-00002-of-00005.safetensors": the file name of shard `shard` (0-based) of `count`.
std::string shardFileName(size_t shard, size_t count);

/// Whether `name` is a shard's file name ("model-NNNNN-of-NNNNN.safetensors").
bool isShardFileName(std::string_view name);

/// The weights file of the model folder `folder`: its model.safetensors, else its
/// model.safetensors.index.json, as from_pretrained prefers them; "" when it has neither.
std::string modelSafetensorsIn(const std::string &folder);

/// The tensors of a safetensors checkpoint that is one file or a sharded set: every
/// tensor is read from the shard the index names. Opening an index opens each shard and
/// checks them against it: every tensor of the weight_map is in its shard, and every
/// tensor of a shard is mapped to that shard (so a tensor in two shards, or a shard left
/// from another save, is refused).
class ShardedSafetensorsReader {
public:
  /// Opens `path`: an index (a name ending in ".index.json") and its shards, else one
  /// safetensors file. Throws SafetensorsError.
  explicit ShardedSafetensorsReader(const std::string &path);

  const std::string &path() const { return path_; }
  bool contains(const std::string &name) const { return entries_.count(name) != 0; }
  /// Every tensor, by name, as its shard's header describes it.
  const std::map<std::string, SafetensorsEntry> &entries() const { return entries_; }
  /// The file that holds tensor `name` (which must be there).
  const std::string &fileOf(const std::string &name) const;

  /// SafetensorsReader::readF32 and readU8 from the tensor's shard; a tensor in no shard is
  /// refused naming path() (one file without an index: naming the file, as it does).
  void readF32(const std::string &name, const std::vector<int64_t> &expectedShape, float *out);
  void readU8(const std::string &name, const std::vector<int64_t> &expectedShape, uint8_t *out);
  /// The shard holding tensor `name` (a tensor in no shard is refused naming path()): where
  /// a bitsandbytes weight's parts are read from together (bnb_4bit_weight.h).
  SafetensorsReader &shardOf(const std::string &name);

private:
  std::string path_;
  std::vector<SafetensorsReader> shards_;
  std::map<std::string, size_t> shardOfTensor_; ///< tensor name -> index into shards_
  std::map<std::string, SafetensorsEntry> entries_;
};

/// Saves `tensors` (F32 or U8), grouped in the given order (a state dict's), in the model
/// folder `folder` as save_pretrained(max_shard_size=maxShardBytes) does: one
/// model.safetensors when they make one shard (groupIntoShards), else the shards, each
/// written with its tensors sorted by name as the safetensors library writes them, and
/// model.safetensors.index.json. What an earlier save left there and this one does not
/// replace (model.safetensors, the index, shards of another count) is removed, in an order
/// in which a crash leaves either a complete model or none a loader accepts. Each file is
/// written atomically (writeSafetensors). Returns the names of the files written.
std::vector<std::string> saveModelSafetensors(const std::string &folder,
                                              const std::vector<TensorToWrite> &tensors,
                                              uint64_t maxShardBytes);

} // namespace bertc
