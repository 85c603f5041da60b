#include "torch_pickle.h"

#include <cstring>
#include <deque>
#include <set>

namespace bertc {

namespace {

struct Value;
/// Values are owned by their Unpickler (a pickle may make a list that holds itself).
using ValuePtr = Value *;

/// A value on the unpickler's stack or in its memo.
struct Value {
  enum class Kind { None, Bool, Int, Float, String, Tuple, List, Dict, Global, Storage, Tensor };
  Kind kind = Kind::None;
  int64_t integer = 0;         ///< Bool, Int (an Int too wide for 64 bits is kept as 0)
  double real = 0;             ///< Float
  std::string text;            ///< String; Global as "module.name"
  std::vector<ValuePtr> items; ///< Tuple, List; Dict as key, value, key, value, ...
  TorchTensor tensor;          ///< Tensor; Storage: its dtype and storageKey
};

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

/// The functions that rebuild a tensor (or a Parameter around one), evaluated by REDUCE.
const std::set<std::string> kRebuilders = {
    "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor_v3",
    "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state"};

/// A bound on the values one pickle makes: a state dict makes tens per tensor, and each
/// value costs about a hundred bytes.
constexpr size_t kMaxValues = size_t(1) << 20;

class Unpickler {
public:
  Unpickler(std::istream &in, uint64_t end, const std::string &path)
      : in_(in), end_(end), path_(path) {}

  /// Runs the pickle to its STOP and returns its value.
  ValuePtr run() {
    for (;;) {
      uint8_t op = byte();
      switch (op) {
      case 0x80:
        byte();
        break; // PROTO
      case 0x95:
        number(8);
        break; // FRAME
      case '.':
        return pop(); // STOP
      case 'N':
        push(make(Value::Kind::None));
        break;
      case 0x88:
      case 0x89: { // NEWTRUE, NEWFALSE
        ValuePtr value = make(Value::Kind::Bool);
        value->integer = op == 0x88;
        push(value);
        break;
      }
      case 'K':
        pushInt(int64_t(number(1)));
        break; // BININT1
      case 'M':
        pushInt(int64_t(number(2)));
        break; // BININT2
      case 'J':
        pushInt(int64_t(int32_t(uint32_t(number(4)))));
        break; // BININT
      case 0x8a:
        pushLong(size_t(number(1)));
        break;    // LONG1
      case 'G': { // BINFLOAT: big-endian double
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i)
          bits = bits << 8 | byte();
        ValuePtr value = make(Value::Kind::Float);
        std::memcpy(&value->real, &bits, sizeof bits);
        push(value);
        break;
      }
      case 'X':
        pushString(number(4));
        break; // BINUNICODE
      case 0x8c:
        pushString(number(1));
        break;    // SHORT_BINUNICODE
      case 'c': { // GLOBAL "module\nname\n"
        std::string module = line();
        global(module, line());
        break;
      }
      case 0x93: { // STACK_GLOBAL (protocol 4): the module and name as strings
        ValuePtr name = pop(), module = pop();
        if (module->kind != Value::Kind::String || name->kind != Value::Kind::String)
          throw error("STACK_GLOBAL of something other than two strings");
        global(module->text, name->text);
        break;
      }
      case '(':
        marks_.push_back(stack_.size());
        break; // MARK
      case ')':
        push(make(Value::Kind::Tuple));
        break; // EMPTY_TUPLE
      case ']':
        push(make(Value::Kind::List));
        break; // EMPTY_LIST
      case '}':
        push(make(Value::Kind::Dict));
        break; // EMPTY_DICT
      case 't':
        push(tuple(popMark()));
        break; // TUPLE
      case 0x85:
      case 0x86:
      case 0x87: { // TUPLE1, TUPLE2, TUPLE3
        size_t count = op - 0x84;
        if (stack_.size() < count)
          throw error("stack underflow");
        std::vector<ValuePtr> items(stack_.end() - long(count), stack_.end());
        stack_.resize(stack_.size() - count);
        push(tuple(std::move(items)));
        break;
      }
      case 'q':
        memo_[number(1)] = top();
        break; // BINPUT
      case 'r':
        memo_[number(4)] = top();
        break; // LONG_BINPUT
      case 0x94:
        memo_[memo_.size()] = top();
        break; // MEMOIZE
      case 'h':
        push(memo(number(1)));
        break; // BINGET
      case 'j':
        push(memo(number(4)));
        break; // LONG_BINGET
      case 'a': {
        ValuePtr item = pop();
        into(Value::Kind::List)->items.push_back(item);
        break;
      }
      case 'e': { // APPENDS
        std::vector<ValuePtr> items = popMark();
        append(into(Value::Kind::List)->items, items);
        break;
      }
      case 's': { // SETITEM
        ValuePtr value = pop(), key = pop();
        append(into(Value::Kind::Dict)->items, {key, value});
        break;
      }
      case 'u': { // SETITEMS
        std::vector<ValuePtr> items = popMark();
        if (items.size() % 2)
          throw error("SETITEMS with an odd number of items");
        append(into(Value::Kind::Dict)->items, items);
        break;
      }
      case 'Q':
        persistent();
        break; // BINPERSID
      case 'R':
        reduce();
        break;
      case 'b':
        pop();
        break; // BUILD: an OrderedDict's _metadata, not needed
      default:
        throw error("opcode 0x" + hex(op) + " is not one torch.save writes for a state dict");
      }
    }
  }

private:
  TorchCheckpointError error(const std::string &message) const {
    return TorchCheckpointError(path_ + ": pickle: " + message);
  }
  static std::string hex(uint8_t op) {
    const char *digits = "0123456789abcdef";
    return {digits[op >> 4], digits[op & 15]};
  }
  static void append(std::vector<ValuePtr> &to, const std::vector<ValuePtr> &from) {
    to.insert(to.end(), from.begin(), from.end());
  }

  uint8_t byte() {
    if (uint64_t(in_.tellg()) >= end_)
      throw error("truncated (no STOP)");
    char c;
    if (!in_.get(c))
      throw error("truncated (no STOP)");
    return uint8_t(c);
  }
  /// An unsigned little-endian number of `width` bytes.
  uint64_t number(int width) {
    uint64_t value = 0;
    for (int i = 0; i < width; ++i)
      value |= uint64_t(byte()) << (8 * i);
    return value;
  }
  void pushInt(int64_t integer) {
    ValuePtr value = make(Value::Kind::Int);
    value->integer = integer;
    push(value);
  }
  /// LONG1: a little-endian two's-complement integer of `width` bytes.
  void pushLong(size_t width) {
    uint64_t bits = 0;
    uint8_t last = 0;
    for (size_t i = 0; i < width; ++i) {
      last = byte();
      if (i < 8)
        bits |= uint64_t(last) << (8 * i);
    }
    if (width > 0 && width < 8 && (last & 0x80))
      bits |= ~uint64_t(0) << (8 * width); // sign-extend
    pushInt(width > 8 ? 0 : int64_t(bits));
  }
  void pushString(uint64_t length) {
    if (uint64_t(in_.tellg()) + length > end_)
      throw error("truncated string");
    ValuePtr value = make(Value::Kind::String);
    value->text.resize(length);
    in_.read(value->text.data(), std::streamsize(length));
    push(value);
  }
  /// A global: only the names torch.save's state dicts use, the functions that rebuild
  /// tensors and the torch module's own names (storage classes, dtypes), which stay names.
  void global(const std::string &module, const std::string &name) {
    std::string full = module + "." + name;
    bool allowed = full == "collections.OrderedDict" || kRebuilders.count(full) ||
                   (module == "torch" && name.find('.') == std::string::npos);
    if (!allowed)
      throw error("refers to " + full +
                  ", which a state dict of tensors does not: save the "
                  "state dict itself (torch.save(model.state_dict(), path))");
    ValuePtr value = make(Value::Kind::Global);
    value->text = full;
    push(value);
  }
  std::string line() {
    std::string text;
    for (char c = char(byte()); c != '\n'; c = char(byte()))
      text += c;
    return text;
  }
  /// BINPERSID: ('storage', StorageClass or dtype, key, location, numel[, view]) names a
  /// storage; its dtype stays unknown ("") unless a typed storage class names it.
  void persistent() {
    ValuePtr id = pop();
    if (id->kind != Value::Kind::Tuple || id->items.size() < 5 || id->items[0]->text != "storage" ||
        id->items[1]->kind != Value::Kind::Global || id->items[2]->kind != Value::Kind::String ||
        (id->items.size() > 5 && id->items[5]->kind != Value::Kind::None))
      throw error("a persistent id that is not a whole storage");
    ValuePtr storage = make(Value::Kind::Storage);
    storage->tensor.dtype = storageDtype(id->items[1]->text);
    storage->tensor.storageKey = id->items[2]->text;
    storageDtypes[storage->tensor.storageKey] = storage->tensor.dtype;
    push(storage);
  }
  /// REDUCE: the calls a state dict makes, evaluated here.
  void reduce() {
    ValuePtr arguments = pop(), callable = pop();
    if (callable->kind != Value::Kind::Global || arguments->kind != Value::Kind::Tuple)
      throw error("a call of something other than an allowed global");
    const std::vector<ValuePtr> &args = arguments->items;
    if (callable->text == "collections.OrderedDict") {
      push(make(Value::Kind::Dict));
    } else if (callable->text == "torch._utils._rebuild_parameter" ||
               callable->text == "torch._utils._rebuild_parameter_with_state") {
      if (args.empty() || args[0]->kind != Value::Kind::Tensor)
        throw error("_rebuild_parameter without a tensor");
      push(args[0]);
    } else if (kRebuilders.count(callable->text)) {
      // _rebuild_tensor_v2 (storage, storage_offset, size, stride, requires_grad,
      // backward_hooks[, metadata]); _rebuild_tensor_v3 the same with the dtype of an
      // untyped storage before the metadata (a dtype not read here).
      if (args.size() < 4 || args[0]->kind != Value::Kind::Storage ||
          args[1]->kind != Value::Kind::Int || args[2]->kind != Value::Kind::Tuple ||
          args[3]->kind != Value::Kind::Tuple || args[2]->items.size() != args[3]->items.size())
        throw error("_rebuild_tensor_v2 with arguments torch.save does not write");
      ValuePtr tensor = make(Value::Kind::Tensor);
      tensor->tensor = args[0]->tensor;
      if (callable->text == "torch._utils._rebuild_tensor_v3")
        tensor->tensor.dtype = "";
      tensor->tensor.storageOffset = args[1]->integer;
      for (size_t d = 0; d < args[2]->items.size(); ++d) {
        tensor->tensor.shape.push_back(integerOf(args[2]->items[d]));
        tensor->tensor.stride.push_back(integerOf(args[3]->items[d]));
      }
      push(tensor);
    } else {
      throw error("cannot call " + callable->text);
    }
  }
  int64_t integerOf(const ValuePtr &value) const {
    if (value->kind != Value::Kind::Int)
      throw error("a tensor's size or stride is not an integer");
    return value->integer;
  }

  ValuePtr make(Value::Kind kind) {
    if (values_.size() == kMaxValues)
      throw error("more than " + std::to_string(kMaxValues) +
                  " values, far more than a state dict's pickle holds");
    values_.emplace_back();
    values_.back().kind = kind;
    return &values_.back();
  }
  ValuePtr tuple(std::vector<ValuePtr> items) {
    ValuePtr value = make(Value::Kind::Tuple);
    value->items = std::move(items);
    return value;
  }
  void push(ValuePtr value) { stack_.push_back(value); }
  ValuePtr top() const {
    if (stack_.empty())
      throw error("stack underflow");
    return stack_.back();
  }
  ValuePtr pop() {
    ValuePtr value = top();
    stack_.pop_back();
    return value;
  }
  /// The values pushed since the last MARK, which is dropped.
  std::vector<ValuePtr> popMark() {
    if (marks_.empty())
      throw error("no MARK");
    size_t mark = marks_.back();
    marks_.pop_back();
    if (mark > stack_.size())
      throw error("a MARK's values popped before it ends");
    std::vector<ValuePtr> items(stack_.begin() + long(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }
  /// The container on top of the stack, which must be of `kind`.
  ValuePtr into(Value::Kind kind) const {
    ValuePtr container = top();
    if (container->kind != kind)
      throw error("an item added to something that is not a list or dict");
    return container;
  }
  ValuePtr memo(uint64_t index) const {
    auto found = memo_.find(index);
    if (found == memo_.end())
      throw error("memo " + std::to_string(index) + " read before it is written");
    return found->second;
  }

  std::istream &in_;
  uint64_t end_;
  const std::string &path_;
  std::vector<ValuePtr> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, ValuePtr> memo_;
  std::deque<Value> values_; ///< every value made, at a stable address

public:
  /// The dtype of every storage the pickle named, by key ("" where unknown).
  std::map<std::string, std::string> storageDtypes;
};

} // namespace

namespace {

/// The tensors of a dict's string keys.
std::map<std::string, TorchTensor> tensorsOf(const Value &dict) {
  std::map<std::string, TorchTensor> tensors;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2)
    if (dict.items[i]->kind == Value::Kind::String &&
        dict.items[i + 1]->kind == Value::Kind::Tensor)
      tensors[dict.items[i]->text] = dict.items[i + 1]->tensor;
  return tensors;
}

} // namespace

PickledStateDict unpickleStateDict(std::istream &in, uint64_t end, const std::string &path) {
  Unpickler unpickler(in, end, path);
  ValuePtr top = unpickler.run();
  if (top->kind != Value::Kind::Dict)
    throw TorchCheckpointError(path + ": holds no state dict (the pickle is not a dict)");
  PickledStateDict result{tensorsOf(*top), unpickler.storageDtypes};
  if (!result.tensors.empty())
    return result;
  // A training script's checkpoint ({"model": state_dict, "epoch": 3, ...}): the one dict
  // in it that holds tensors.
  std::string keys;
  const Value *nested = nullptr;
  for (size_t i = 0; i + 1 < top->items.size(); i += 2) {
    const Value &key = *top->items[i], &value = *top->items[i + 1];
    keys += (keys.empty() ? "" : ", ") + (key.kind == Value::Kind::String ? key.text : "?");
    if (value.kind == Value::Kind::Dict && !tensorsOf(value).empty())
      nested = nested ? top : &value; // a second one: ambiguous
  }
  if (!nested || nested == top)
    throw TorchCheckpointError(path + ": holds no state dict: its dict has no tensors" +
                               (keys.empty() ? std::string() : " (keys: " + keys + ")") +
                               (nested ? ", and more than one dict of tensors inside" : ""));
  result.tensors = tensorsOf(*nested);
  return result;
}

std::vector<std::string> unpickleStrings(std::istream &in, uint64_t end, const std::string &path) {
  Unpickler unpickler(in, end, path);
  ValuePtr top = unpickler.run();
  std::vector<std::string> strings;
  for (const ValuePtr &item : top->items) {
    if (item->kind != Value::Kind::String)
      break;
    strings.push_back(item->text);
  }
  if (top->kind != Value::Kind::List || strings.size() != top->items.size())
    throw TorchCheckpointError(path + ": the storage keys are not a list of strings");
  return strings;
}

void skipPickle(std::istream &in, uint64_t end, const std::string &path) {
  Unpickler(in, end, path).run();
}

} // namespace bertc
