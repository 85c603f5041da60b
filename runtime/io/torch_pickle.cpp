#include "torch_pickle.h"

#include "pickle_machine.h"

#include <set>

namespace bertc {

namespace {

using Kind = PickleValue::Kind;

/// The dtype a typed storage class holds, in safetensors' names; empty for another class.
std::string storageDtype(const std::string &global) {
  static const std::map<std::string, std::string> dtypes = {
      {"torch.FloatStorage", "F32"},        {"torch.HalfStorage", "F16"},
      {"torch.BFloat16Storage", "BF16"},    {"torch.DoubleStorage", "F64"},
      {"torch.LongStorage", "I64"},         {"torch.IntStorage", "I32"},
      {"torch.ShortStorage", "I16"},        {"torch.CharStorage", "I8"},
      {"torch.ByteStorage", "U8"},          {"torch.BoolStorage", "BOOL"},
      {"torch.ComplexFloatStorage", "C64"}, {"torch.ComplexDoubleStorage", "C128"},
      {"torch.QInt8Storage", "Q8"},         {"torch.QUInt8Storage", "QU8"},
      {"torch.QInt32Storage", "Q32"}};
  auto found = dtypes.find(global);
  return found == dtypes.end() ? "" : found->second;
}

/// The functions that rebuild a tensor (or a Parameter around one), evaluated by `call`.
const std::set<std::string> kRebuilders = {
    "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor_v3",
    "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state"};

/// What torch.save's pickles mean: tensors rebuilt from storages named by persistent ids.
class TorchUnpickler : public PickleMachine {
public:
  using PickleMachine::PickleMachine;

  /// The dtype of every storage the pickle named, by key ("" where unknown).
  std::map<std::string, std::string> storageDtypes;

protected:
  /// Only the names torch.save's state dicts use: OrderedDict, the functions that rebuild
  /// tensors, and the torch module's own names (storage classes, dtypes), which stay names.
  PickleValue *global(const std::string &module, const std::string &name) override {
    std::string full = module + "." + name;
    bool allowed = full == "collections.OrderedDict" || kRebuilders.count(full) ||
                   (module == "torch" && name.find('.') == std::string::npos);
    if (!allowed)
      throw error("refers to " + full +
                  ", which a state dict of tensors does not: save the "
                  "state dict itself (torch.save(model.state_dict(), path))");
    PickleValue *value = make(Kind::Global);
    value->text = full;
    return value;
  }

  /// ('storage', StorageClass or dtype, key, location, numel[, view]) names a storage; its
  /// dtype stays unknown ("") unless a typed storage class names it.
  PickleValue *persistent(PickleValue &id) override {
    if (id.kind != Kind::Tuple || id.items.size() < 5 || id.items[0]->text != "storage" ||
        id.items[1]->kind != Kind::Global || id.items[2]->kind != Kind::String ||
        (id.items.size() > 5 && id.items[5]->kind != Kind::None))
      throw error("a persistent id that is not a whole storage");
    PickleValue *storage = make(Kind::Storage);
    storage->tensor.dtype = storageDtype(id.items[1]->text);
    storage->tensor.storageKey = id.items[2]->text;
    storageDtypes[storage->tensor.storageKey] = storage->tensor.dtype;
    return storage;
  }

  PickleValue *call(const PickleValue &callable, const std::vector<PickleValue *> &args) override {
    const std::string &name = callable.text;
    if (name == "collections.OrderedDict")
      return make(Kind::Dict);
    if (name == "torch._utils._rebuild_parameter" ||
        name == "torch._utils._rebuild_parameter_with_state") {
      if (args.empty() || args[0]->kind != Kind::Tensor)
        throw error("_rebuild_parameter without a tensor");
      return args[0];
    }
    if (!kRebuilders.count(name))
      throw error("cannot call " + name);
    // _rebuild_tensor_v2 (storage, storage_offset, size, stride, requires_grad,
    // backward_hooks[, metadata]); _rebuild_tensor_v3 the same with the dtype of an untyped
    // storage before the metadata (a dtype not read here).
    if (args.size() < 4 || args[0]->kind != Kind::Storage || args[1]->kind != Kind::Int ||
        args[2]->kind != Kind::Tuple || args[3]->kind != Kind::Tuple ||
        args[2]->items.size() != args[3]->items.size())
      throw error(name + " with arguments torch.save does not write");
    PickleValue *tensor = make(Kind::Tensor);
    tensor->tensor = args[0]->tensor;
    if (name == "torch._utils._rebuild_tensor_v3")
      tensor->tensor.dtype = "";
    tensor->tensor.storageOffset = args[1]->integer;
    if (args[1]->wide)
      tensor->text = "its storage offset does not fit in 64 bits";
    for (size_t d = 0; d < args[2]->items.size(); ++d) {
      tensor->tensor.shape.push_back(integerOf(*args[2]->items[d], "size", d, *tensor));
      tensor->tensor.stride.push_back(integerOf(*args[3]->items[d], "stride", d, *tensor));
    }
    return tensor;
  }

private:
  /// A size or stride of `tensor`; one beyond int64 becomes the tensor's flaw.
  int64_t integerOf(const PickleValue &value, const char *what, size_t dim,
                    PickleValue &tensor) const {
    if (value.kind != Kind::Int)
      throw error("a tensor's size or stride is not an integer");
    if (value.wide && tensor.text.empty())
      tensor.text = "its " + std::string(what) + " in dimension " + std::to_string(dim) +
                    " does not fit in 64 bits";
    return value.integer;
  }
};

/// The tensors of a dict's string keys. A tensor torch.load would refuse (a size, stride
/// or offset beyond int64) is an error naming it.
std::map<std::string, TorchTensor> tensorsOf(const PickleValue &dict, const std::string &path) {
  std::map<std::string, TorchTensor> tensors;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PickleValue &key = *dict.items[i], &value = *dict.items[i + 1];
    if (key.kind != Kind::String || value.kind != Kind::Tensor)
      continue;
    if (!value.text.empty())
      throw TorchCheckpointError(path + ": tensor " + key.text + ": " + value.text);
    tensors[key.text] = value.tensor;
  }
  return tensors;
}

} // namespace

PickledStateDict unpickleStateDict(std::istream &in, uint64_t end, const std::string &path) {
  TorchUnpickler unpickler(in, end, path);
  PickleValue *top = unpickler.run();
  if (top->kind != Kind::Dict)
    throw TorchCheckpointError(path + ": holds no state dict (the pickle is not a dict)");
  PickledStateDict result{tensorsOf(*top, path), unpickler.storageDtypes};
  if (!result.tensors.empty())
    return result;
  // A training script's checkpoint ({"model": state_dict, "epoch": 3, ...}): the one dict
  // in it that holds tensors.
  std::string keys;
  const PickleValue *nested = nullptr;
  for (size_t i = 0; i + 1 < top->items.size(); i += 2) {
    const PickleValue &key = *top->items[i], &value = *top->items[i + 1];
    keys += (keys.empty() ? "" : ", ") + (key.kind == Kind::String ? key.text : "?");
    if (value.kind == Kind::Dict && !tensorsOf(value, path).empty())
      nested = nested ? top : &value; // a second one: ambiguous
  }
  if (!nested || nested == top)
    throw TorchCheckpointError(path + ": holds no state dict: its dict has no tensors" +
                               (keys.empty() ? std::string() : " (keys: " + keys + ")") +
                               (nested ? ", and more than one dict of tensors inside" : ""));
  result.tensors = tensorsOf(*nested, path);
  return result;
}

std::vector<std::string> unpickleStrings(std::istream &in, uint64_t end, const std::string &path) {
  TorchUnpickler unpickler(in, end, path);
  PickleValue *top = unpickler.run();
  std::vector<std::string> strings;
  for (const PickleValue *item : top->items) {
    if (item->kind != Kind::String)
      break;
    strings.push_back(item->text);
  }
  if (top->kind != Kind::List || strings.size() != top->items.size())
    throw TorchCheckpointError(path + ": the storage keys are not a list of strings");
  return strings;
}

void skipPickle(std::istream &in, uint64_t end, const std::string &path) {
  TorchUnpickler(in, end, path).run();
}

} // namespace bertc
