#include "pickle_machine.h"

#include <cstring>

namespace bertc {

namespace {

/// The pickle opcodes a state dict uses (Python's pickletools names them).
enum Opcode : uint8_t {
  kMark = '(',
  kStop = '.',
  kBinFloat = 'G',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kBinInt2 = 'M',
  kNone = 'N',
  kBinPersId = 'Q',
  kReduce = 'R',
  kBinUnicode = 'X',
  kAppend = 'a',
  kBuild = 'b',
  kGlobal = 'c',
  kAppends = 'e',
  kBinGet = 'h',
  kLongBinGet = 'j',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kSetItem = 's',
  kTuple = 't',
  kSetItems = 'u',
  kEmptyDict = '}',
  kEmptyList = ']',
  kEmptyTuple = ')',
  kProto = 0x80,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kShortBinUnicode = 0x8c,
  kStackGlobal = 0x93,
  kMemoize = 0x94,
  kFrame = 0x95,
};

/// A bound on the values one pickle makes: a state dict makes tens per tensor, and each
/// value costs about a hundred bytes.
constexpr size_t kMaxValues = size_t(1) << 20;

std::string hex(uint8_t op) {
  const char *digits = "0123456789abcdef";
  return {digits[op >> 4], digits[op & 15]};
}

} // namespace

PickleMachine::PickleMachine(std::istream &in, uint64_t end, const std::string &path)
    : in_(in), end_(end), path_(path) {}

PickleValue *PickleMachine::run() {
  for (;;) {
    uint8_t op = byte();
    switch (op) {
    case kProto:
      byte();
      break;
    case kFrame:
      number(8);
      break;
    case kStop:
      return pop();
    case kNone:
      push(make(PickleValue::Kind::None));
      break;
    case kNewTrue:
    case kNewFalse:
      pushInt(op == kNewTrue, PickleValue::Kind::Bool);
      break;
    case kBinInt1:
      pushInt(int64_t(number(1)));
      break;
    case kBinInt2:
      pushInt(int64_t(number(2)));
      break;
    case kBinInt:
      pushInt(int64_t(int32_t(uint32_t(number(4)))));
      break;
    case kLong1:
      pushLong(size_t(number(1)));
      break;
    case kBinFloat:
      pushFloat();
      break;
    case kBinUnicode:
      pushString(number(4));
      break;
    case kShortBinUnicode:
      pushString(number(1));
      break;
    case kGlobal: {
      std::string module = line();
      pushGlobal(module, line());
      break;
    }
    case kStackGlobal: {
      PickleValue *name = pop(), *module = pop();
      if (module->kind != PickleValue::Kind::String || name->kind != PickleValue::Kind::String)
        throw error("STACK_GLOBAL of something other than two strings");
      pushGlobal(module->text, name->text);
      break;
    }
    case kMark:
      marks_.push_back(stack_.size());
      break;
    case kEmptyTuple:
      push(make(PickleValue::Kind::Tuple));
      break;
    case kEmptyList:
      push(make(PickleValue::Kind::List));
      break;
    case kEmptyDict:
      push(make(PickleValue::Kind::Dict));
      break;
    case kTuple:
      push(tuple(popMark()));
      break;
    case kTuple1:
    case kTuple2:
    case kTuple3:
      push(tuple(popLast(size_t(op - kTuple1 + 1))));
      break;
    case kBinPut:
      memo_[number(1)] = top();
      break;
    case kLongBinPut:
      memo_[number(4)] = top();
      break;
    case kMemoize:
      memo_[memo_.size()] = top();
      break;
    case kBinGet:
      push(memo(number(1)));
      break;
    case kLongBinGet:
      push(memo(number(4)));
      break;
    case kAppend:
      append(PickleValue::Kind::List, popLast(1));
      break;
    case kAppends:
      append(PickleValue::Kind::List, popMark());
      break;
    case kSetItem:
      append(PickleValue::Kind::Dict, popLast(2));
      break;
    case kSetItems:
      append(PickleValue::Kind::Dict, popMark());
      break;
    case kBinPersId:
      push(persistent(*pop()));
      break;
    case kReduce:
      reduce();
      break;
    case kBuild: // an OrderedDict's _metadata: not needed
      pop();
      break;
    default:
      throw error("opcode 0x" + hex(op) + " is not one torch.save writes for a state dict");
    }
  }
}

TorchCheckpointError PickleMachine::error(const std::string &message) const {
  return TorchCheckpointError(path_ + ": pickle: " + message);
}

PickleValue *PickleMachine::make(PickleValue::Kind kind) {
  if (values_.size() == kMaxValues)
    throw error("more than " + std::to_string(kMaxValues) +
                " values, far more than a state dict's pickle holds");
  values_.emplace_back();
  values_.back().kind = kind;
  return &values_.back();
}

uint8_t PickleMachine::byte() {
  char c;
  if (uint64_t(in_.tellg()) >= end_ || !in_.get(c))
    throw error("truncated (no STOP)");
  return uint8_t(c);
}

/// An unsigned little-endian number of `width` bytes.
uint64_t PickleMachine::number(int width) {
  uint64_t value = 0;
  for (int i = 0; i < width; ++i)
    value |= uint64_t(byte()) << (8 * i);
  return value;
}

std::string PickleMachine::line() {
  std::string text;
  for (char c = char(byte()); c != '\n'; c = char(byte()))
    text += c;
  return text;
}

void PickleMachine::pushInt(int64_t integer, PickleValue::Kind kind) {
  PickleValue *value = make(kind);
  value->integer = integer;
  push(value);
}

/// BINFLOAT: a big-endian double.
void PickleMachine::pushFloat() {
  uint64_t bits = 0;
  for (int i = 0; i < 8; ++i)
    bits = bits << 8 | byte();
  PickleValue *value = make(PickleValue::Kind::Float);
  std::memcpy(&value->real, &bits, sizeof bits);
  push(value);
}

/// LONG1: a little-endian two's-complement integer of `width` bytes.
void PickleMachine::pushLong(size_t width) {
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

void PickleMachine::pushString(uint64_t length) {
  if (uint64_t(in_.tellg()) + length > end_)
    throw error("truncated string");
  PickleValue *value = make(PickleValue::Kind::String);
  value->text.resize(length);
  in_.read(value->text.data(), std::streamsize(length));
  push(value);
}

void PickleMachine::pushGlobal(const std::string &module, const std::string &name) {
  push(global(module, name));
}

void PickleMachine::reduce() {
  PickleValue *arguments = pop(), *callable = pop();
  if (callable->kind != PickleValue::Kind::Global || arguments->kind != PickleValue::Kind::Tuple)
    throw error("a call of something other than an allowed global");
  push(call(*callable, arguments->items));
}

/// Adds `items` to the list or dict (key, value, ...) under them.
void PickleMachine::append(PickleValue::Kind kind, const std::vector<PickleValue *> &items) {
  PickleValue *container = top();
  if (container->kind != kind)
    throw error("an item added to something that is not a list or dict");
  if (kind == PickleValue::Kind::Dict && items.size() % 2)
    throw error("a dict item without its value");
  container->items.insert(container->items.end(), items.begin(), items.end());
}

PickleValue *PickleMachine::tuple(std::vector<PickleValue *> items) {
  PickleValue *value = make(PickleValue::Kind::Tuple);
  value->items = std::move(items);
  return value;
}

PickleValue *PickleMachine::top() const {
  if (stack_.empty())
    throw error("stack underflow");
  return stack_.back();
}

PickleValue *PickleMachine::pop() {
  PickleValue *value = top();
  stack_.pop_back();
  return value;
}

/// The values pushed since the last MARK, which is dropped.
std::vector<PickleValue *> PickleMachine::popMark() {
  if (marks_.empty())
    throw error("no MARK");
  size_t mark = marks_.back();
  marks_.pop_back();
  if (mark > stack_.size())
    throw error("a MARK's values popped before it ends");
  std::vector<PickleValue *> items(stack_.begin() + long(mark), stack_.end());
  stack_.resize(mark);
  return items;
}

/// The last `count` values, popped.
std::vector<PickleValue *> PickleMachine::popLast(size_t count) {
  if (stack_.size() < count)
    throw error("stack underflow");
  std::vector<PickleValue *> items(stack_.end() - long(count), stack_.end());
  stack_.resize(stack_.size() - count);
  return items;
}

PickleValue *PickleMachine::memo(uint64_t index) const {
  auto found = memo_.find(index);
  if (found == memo_.end())
    throw error("memo " + std::to_string(index) + " read before it is written");
  return found->second;
}

} // namespace bertc
