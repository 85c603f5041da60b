// What torch.save's pickles mean, read on pickle_machine.h: the globals a state dict of
// tensors names (collections.OrderedDict, torch._utils' functions that rebuild tensors and
// Parameters, the torch module's storage classes and dtypes) are allowed, the rebuilding
// functions evaluated here, storages named by persistent ids; nothing is imported or run.
#pragma once

#include "bertc/runtime/torch_checkpoint.h"

#include <istream>
#include <map>
#include <string>
#include <vector>

namespace bertc {

/// A pickled state dict: its tensors by name, and the dtype of every storage the pickle
/// names (those of tensors left out too; "" where the storage's class is not a typed one).
struct PickledStateDict {
  std::map<std::string, TorchTensor> tensors;
  std::map<std::string, std::string> storageDtypes;
};

/// The state dict pickled from `in`'s position to before `end` (a file offset): the
/// top-level dict's tensors (entries that are not tensors are left out), or where it holds
/// none, those of the one dict inside it that holds tensors (a training checkpoint's
/// {"model": state_dict, ...}). `path` is for messages. Throws TorchCheckpointError.
PickledStateDict unpickleStateDict(std::istream &in, uint64_t end, const std::string &path);

/// A pickled list of strings (the older format's storage keys), read from `in`.
std::vector<std::string> unpickleStrings(std::istream &in, uint64_t end, const std::string &path);

/// Reads one pickle of plain values (the older format's magic number, protocol and system
/// information) and drops it.
void skipPickle(std::istream &in, uint64_t end, const std::string &path);

} // namespace bertc
