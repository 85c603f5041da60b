// Sharded safetensors checkpoints (safetensors_shards.h): the index's text, the grouping of
// tensors into shards, the reader that sends each tensor's read to its shard, and the
// writer that saves a model folder's weights as one file or as shards.
#include "bertc/runtime/safetensors_shards.h"

#include "bertc/runtime/input_files.h"
#include "bertc/runtime/save_files.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

namespace bertc {
namespace fs = std::filesystem;
namespace {

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Whether `name` names a file in the index's own folder: a shard elsewhere ("../x",
/// "/x", "a/b") would let an index read any file on the machine.
bool isFileNameBesideIndex(const std::string &name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string("/\0", 2)) == std::string::npos;
}

/// Bytes of a tensor's data as writeSafetensors writes it (F32, or U8).
uint64_t dataBytes(const TensorToWrite &tensor) {
  uint64_t bytes = dtypeBytes(tensor.dtype);
  for (int64_t dim : tensor.shape)
    bytes *= uint64_t(dim);
  return bytes;
}

/// Removes `path` if it is there; throws SaveError when it cannot.
void removeIfPresent(const fs::path &path) {
  std::error_code error;
  fs::remove(path, error);
  if (error)
    throw SaveError(path.string() +
                    ": cannot remove a file an earlier save left: " + error.message());
}

/// Removes the shard files in `folder` whose names are not in `kept`.
void removeShardsBut(const fs::path &folder, const std::set<std::string> &kept) {
  std::error_code error;
  std::vector<fs::path> stale;
  for (const fs::directory_entry &entry : fs::directory_iterator(folder, error)) {
    std::string name = entry.path().filename().string();
    if (isShardFileName(name) && !kept.count(name) && entry.is_regular_file(error))
      stale.push_back(entry.path());
  }
  if (error)
    throw SaveError(folder.string() + ": cannot list the folder: " + error.message());
  for (const fs::path &path : stale)
    removeIfPresent(path);
}

} // namespace

SafetensorsIndex parseSafetensorsIndex(std::string_view text, const std::string &path) {
  if (std::optional<JsonLimitIssue> issue = findJsonLimitIssue(text))
    throw SafetensorsError(path + ":" + std::to_string(issue->line) + ":" +
                           std::to_string(issue->column) + ": " + issue->what);
  // nlohmann keeps the last of two equal keys: a tensor listed twice is caught while parsing.
  std::string section, duplicate;
  std::set<std::string> listed;
  auto findDuplicates = [&](int depth, nlohmann::json::parse_event_t event,
                            nlohmann::json &parsed) {
    if (event != nlohmann::json::parse_event_t::key || !parsed.is_string())
      return true;
    if (depth == 1)
      section = parsed.get<std::string>();
    else if (depth == 2 && section == "weight_map" && duplicate.empty() &&
             !listed.insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text, findDuplicates);
  } catch (const nlohmann::json::exception &error) {
    throw SafetensorsError(path + ": malformed JSON: " + jsonParseMessage(error));
  }
  if (!json.is_object())
    throw SafetensorsError(path + ": not a safetensors index: the JSON is not an object");
  if (!duplicate.empty())
    throw SafetensorsError(path + ": tensor " + duplicate + ": listed twice in the weight_map");
  auto weightMap = json.find("weight_map");
  if (weightMap == json.end() || !weightMap->is_object())
    throw SafetensorsError(path + ": not a safetensors index: no \"weight_map\" object");
  SafetensorsIndex index;
  for (const auto &[tensor, shard] : weightMap->items()) {
    if (!shard.is_string())
      throw SafetensorsError(path + ": tensor " + tensor + ": its shard is " + shard.dump() +
                             ", not a file name");
    std::string file = shard.get<std::string>();
    if (!isFileNameBesideIndex(file))
      throw SafetensorsError(path + ": tensor " + tensor + ": its shard " + shard.dump() +
                             " is not a file in the index's folder");
    index.weightMap[tensor] = file;
  }
  if (auto metadata = json.find("metadata"); metadata != json.end() && metadata->is_object())
    if (auto total = metadata->find("total_size");
        total != metadata->end() && total->is_number_unsigned())
      index.totalSize = total->get<uint64_t>();
  return index;
}

std::string formatSafetensorsIndex(const SafetensorsIndex &index) {
  // nlohmann::json's objects keep their keys sorted, as sort_keys=True does.
  nlohmann::json json = {{"metadata", {{"total_size", index.totalSize}}},
                         {"weight_map", index.weightMap}};
  return json.dump(2) + "\n";
}

std::vector<std::vector<size_t>> groupIntoShards(const std::vector<uint64_t> &tensorBytes,
                                                 uint64_t maxShardBytes) {
  std::vector<std::vector<size_t>> shards;
  std::vector<size_t> filling;
  uint64_t fillingBytes = 0;
  for (size_t i = 0; i < tensorBytes.size(); ++i) {
    if (tensorBytes[i] > maxShardBytes) {
      shards.push_back({i});
      continue;
    }
    if (fillingBytes + tensorBytes[i] > maxShardBytes) {
      shards.push_back(std::move(filling));
      filling.clear();
      fillingBytes = 0;
    }
    filling.push_back(i);
    fillingBytes += tensorBytes[i];
  }
  if (!filling.empty())
    shards.push_back(std::move(filling));
  return shards;
}

std::string shardFileName(size_t shard, size_t count) {
  char name[64];
  std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", shard + 1, count);
  return name;
}

bool isShardFileName(std::string_view name) {
  // model-DIGITS-of-DIGITS.safetensors, each number of at least five digits.
  auto digits = [&](size_t at) {
    size_t end = at;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9')
      ++end;
    return end - at >= 5 ? end : std::string_view::npos;
  };
  if (name.substr(0, 6) != "model-")
    return false;
  size_t first = digits(6);
  if (first == std::string_view::npos || name.substr(first, 4) != "-of-")
    return false;
  size_t second = digits(first + 4);
  return second != std::string_view::npos && name.substr(second) == ".safetensors";
}

std::string modelSafetensorsIn(const std::string &folder) {
  std::error_code error;
  for (const char *name : {kModelSafetensorsName, kModelSafetensorsIndexName})
    if (fs::path file = fs::path(folder) / name; fs::exists(file, error))
      return file.string();
  return "";
}

ShardedSafetensorsReader::ShardedSafetensorsReader(const std::string &path) : path_(path) {
  if (!endsWith(path, ".safetensors.index.json")) {
    shards_.emplace_back(path);
    for (const auto &[name, entry] : shards_.front().entries()) {
      entries_[name] = entry;
      shardOfTensor_[name] = 0;
    }
    return;
  }
  SafetensorsIndex index =
      parseSafetensorsIndex(readWholeFile<SafetensorsError>(path, kSafetensorsIndexLimit), path);
  // 1. Each shard opens once (its header is checked then); a shard that cannot is reported
  //    with a tensor the index puts there.
  std::map<std::string, std::string> tensorOfShard;
  for (const auto &[tensor, shard] : index.weightMap)
    tensorOfShard.emplace(shard, tensor);
  std::map<std::string, size_t> shardNumber;
  shards_.reserve(tensorOfShard.size());
  for (const auto &[shard, tensor] : tensorOfShard) {
    try {
      shards_.emplace_back((folderOf(path) / shard).string());
    } catch (const SafetensorsError &error) {
      throw SafetensorsError(path + ": tensor " + tensor + ": " + error.what());
    }
    shardNumber[shard] = shards_.size() - 1;
  }
  // 2. Every tensor the index lists is in the shard it names.
  for (const auto &[tensor, shard] : index.weightMap) {
    const SafetensorsReader &reader = shards_[shardNumber.at(shard)];
    if (!reader.contains(tensor))
      throw SafetensorsError(path + ": tensor " + tensor + ": the index maps it to " + shard +
                             ", which does not hold it");
    shardOfTensor_[tensor] = shardNumber.at(shard);
    entries_[tensor] = reader.entries().at(tensor);
  }
  // 3. Every tensor of a shard is one the index maps there.
  for (const auto &[shard, number] : shardNumber)
    for (const auto &[tensor, entry] : shards_[number].entries()) {
      const std::string &mapped = index.weightMap.count(tensor) ? index.weightMap.at(tensor) : "";
      if (mapped.empty())
        throw SafetensorsError(path + ": tensor " + tensor + ": in " + shard +
                               " but not in the index's weight_map");
      if (mapped != shard)
        throw SafetensorsError(path + ": tensor " + tensor + ": in both " + mapped +
                               " (where the index maps it) and " + shard);
    }
}

const std::string &ShardedSafetensorsReader::fileOf(const std::string &name) const {
  return shards_[shardOfTensor_.at(name)].path();
}

SafetensorsReader &ShardedSafetensorsReader::shardOf(const std::string &name) {
  auto found = shardOfTensor_.find(name);
  if (found != shardOfTensor_.end())
    return shards_[found->second];
  // One file without an index refuses the name itself, naming the file.
  if (shards_.size() == 1 && shards_.front().path() == path_)
    return shards_.front();
  throw SafetensorsError(path_ + ": tensor " + name + ": not found (the index lists " +
                         std::to_string(entries_.size()) + " tensors)");
}

void ShardedSafetensorsReader::readF32(const std::string &name,
                                       const std::vector<int64_t> &expectedShape, float *out) {
  shardOf(name).readF32(name, expectedShape, out);
}

void ShardedSafetensorsReader::readU8(const std::string &name,
                                      const std::vector<int64_t> &expectedShape, uint8_t *out) {
  shardOf(name).readU8(name, expectedShape, out);
}

/// The steps, so that a loader (which takes model.safetensors before the index) never finds
/// a mix of two saves:
///  unsharded: 1. write model.safetensors (from here on loaders read it);
///             2. remove the index and every shard.
///  sharded:   1. remove the index, so no index describes shards half replaced;
///             2. write the shards;  3. remove the shards of another count;
///             4. write the index;   5. remove model.safetensors (from here on loaders read
///             the index).
std::vector<std::string> saveModelSafetensors(const std::string &folder,
                                              const std::vector<TensorToWrite> &tensors,
                                              uint64_t maxShardBytes) {
  const std::map<std::string, std::string> metadata = {{"format", "pt"}};
  const fs::path dir = folder;
  std::vector<uint64_t> bytes;
  for (const TensorToWrite &tensor : tensors)
    bytes.push_back(dataBytes(tensor));
  std::vector<std::vector<size_t>> shards = groupIntoShards(bytes, maxShardBytes);
  // A file's tensors in name order, as the safetensors library writes a file of one dtype.
  auto byName = [&](const std::vector<size_t> &members) {
    std::vector<TensorToWrite> sorted;
    for (size_t i : members)
      sorted.push_back(tensors[i]);
    std::sort(sorted.begin(), sorted.end(),
              [](const TensorToWrite &a, const TensorToWrite &b) { return a.name < b.name; });
    return sorted;
  };
  if (shards.size() <= 1) {
    std::vector<size_t> all(tensors.size());
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = i;
    writeSafetensors((dir / kModelSafetensorsName).string(), byName(all), metadata);
    removeIfPresent(dir / kModelSafetensorsIndexName);
    removeShardsBut(dir, {});
    syncToDisk(folder);
    return {kModelSafetensorsName};
  }
  removeIfPresent(dir / kModelSafetensorsIndexName);
  syncToDisk(folder);
  SafetensorsIndex index;
  std::vector<std::string> written;
  for (size_t shard = 0; shard < shards.size(); ++shard) {
    std::string name = shardFileName(shard, shards.size());
    writeSafetensors((dir / name).string(), byName(shards[shard]), metadata);
    for (size_t i : shards[shard]) {
      index.weightMap[tensors[i].name] = name;
      index.totalSize += bytes[i];
    }
    written.push_back(name);
  }
  removeShardsBut(dir, std::set<std::string>(written.begin(), written.end()));
  writeTextFileAtomically((dir / kModelSafetensorsIndexName).string(),
                          formatSafetensorsIndex(index));
  written.push_back(kModelSafetensorsIndexName);
  removeIfPresent(dir / kModelSafetensorsName);
  syncToDisk(folder);
  return written;
}

} // namespace bertc
