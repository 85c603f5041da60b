// A restricted unpickler for torch.save's pickles: it interprets the opcodes a state dict
// of tensors uses (protocol 2, as torch.save writes) and allows exactly the globals such a
// pickle names (collections.OrderedDict, torch._utils._rebuild_tensor_v2 and
// _rebuild_parameter, the typed storages); nothing is imported or called.
#pragma once

#include "bertc/runtime/torch_checkpoint.h"

#include <istream>
#include <map>
#include <string>
#include <vector>

namespace bertc {

/// The tensors of the pickled state dict that starts at `in`'s position and ends before
/// `end` (a file offset), by name; entries that are not tensors are left out. `path` is
/// for messages. Throws TorchCheckpointError.
std::map<std::string, TorchTensor> unpickleStateDict(std::istream &in, uint64_t end,
                                                     const std::string &path);

/// A pickled list of strings (the older format's storage keys), read from `in`.
std::vector<std::string> unpickleStrings(std::istream &in, uint64_t end, const std::string &path);

/// Reads one pickle of plain values (the older format's magic number, protocol and system
/// information) and drops it.
void skipPickle(std::istream &in, uint64_t end, const std::string &path);

} // namespace bertc
