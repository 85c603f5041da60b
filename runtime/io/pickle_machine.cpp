#include "pickle_machine.h"

#include <algorithm>
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

/// A bound on what one pickle makes the machine hold: values, MARKs, memo entries and memo
/// values pushed again. A state dict makes tens per tensor; each costs at most a value's
/// two hundred bytes.
constexpr size_t kMaxValues = size_t(1) << 20;

/// The bytes read from the stream at a time.
constexpr size_t kChunkBytes = size_t(64) << 10;

std::string hex(uint8_t op) {
  const char *digits = "0123456789abcdef";
  return {digits[op >> 4], digits[op & 15]};
}

} // namespace

PickleMachine::PickleMachine(std::istream &in, uint64_t end, const std::string &path)
    : in_(in), end_(end), path_(path), buffer_(kChunkBytes) {
  std::streampos at = in.tellg();
  streamAt_ = at < 0 ? end : uint64_t(at); // a stream that cannot tell reads as truncated
}

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
    case kStop: {
      PickleValue *result = pop();
      in_.clear();
      in_.seekg(std::streamoff(streamAt_ - (filled_ - next_)));
      return result;
    }
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
      count();
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
      memoize(number(1));
      break;
    case kLongBinPut:
      memoize(number(4));
      break;
    case kMemoize:
      memoize(memo_.size());
      break;
    case kBinGet:
      count();
      push(memo(number(1)));
      break;
    case kLongBinGet:
      count();
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

void PickleMachine::count() {
  if (++counted_ > kMaxValues)
    throw error("more than " + std::to_string(kMaxValues) +
                " values, MARKs and memo entries, far more than a state dict's pickle holds");
}

PickleValue *PickleMachine::make(PickleValue::Kind kind) {
  count();
  values_.emplace_back();
  values_.back().kind = kind;
  return &values_.back();
}

void PickleMachine::refill() {
  uint64_t left = end_ > streamAt_ ? end_ - streamAt_ : 0;
  std::streamsize got = 0;
  if (left > 0) {
    in_.read(buffer_.data(), std::streamsize(std::min<uint64_t>(left, buffer_.size())));
    got = in_.gcount();
  }
  if (got <= 0)
    throw error("truncated (no STOP)");
  next_ = 0;
  filled_ = size_t(got);
  streamAt_ += uint64_t(got);
}

uint8_t PickleMachine::byte() {
  if (next_ == filled_)
    refill();
  return uint8_t(buffer_[next_++]);
}

/// `length` bytes into `out`: the buffered ones, then a long remainder straight from the
/// stream. The caller has checked that they lie before `end_`.
void PickleMachine::bytes(char *out, uint64_t length) {
  while (length > 0) {
    if (next_ == filled_ && length >= buffer_.size()) {
      in_.read(out, std::streamsize(length));
      if (uint64_t(in_.gcount()) != length)
        throw error("truncated string");
      streamAt_ += length;
      return;
    }
    if (next_ == filled_)
      refill();
    size_t chunk = size_t(std::min<uint64_t>(length, filled_ - next_));
    std::memcpy(out, buffer_.data() + next_, chunk);
    next_ += chunk;
    out += chunk;
    length -= chunk;
  }
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

/// LONG1: a little-endian two's-complement integer of `width` bytes. Bytes past the eighth
/// that only extend the sign keep it an int64; any other makes it `wide` (torch.load
/// refuses such a number as a size, stride or offset: it overflows its int64).
void PickleMachine::pushLong(size_t width) {
  uint64_t bits = 0;
  bool fits = true;
  for (size_t i = 0; i < width; ++i) {
    uint8_t next = byte();
    if (i < 8)
      bits |= uint64_t(next) << (8 * i);
    else
      fits &= next == (int64_t(bits) < 0 ? 0xff : 0x00);
  }
  if (width > 0 && width < 8 && ((bits >> (8 * width - 1)) & 1))
    bits |= ~uint64_t(0) << (8 * width); // sign-extend
  PickleValue *value = make(PickleValue::Kind::Int);
  value->integer = fits ? int64_t(bits) : 0;
  value->wide = !fits;
  push(value);
}

void PickleMachine::pushString(uint64_t length) {
  uint64_t at = streamAt_ - (filled_ - next_);
  if (length > end_ - at)
    throw error("truncated string");
  PickleValue *value = make(PickleValue::Kind::String);
  value->text.resize(length);
  bytes(value->text.data(), length);
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

/// BINPUT, LONG_BINPUT and MEMOIZE: the top value remembered at `index`; a new entry is
/// counted.
void PickleMachine::memoize(uint64_t index) {
  PickleValue *value = top();
  if (!memo_.count(index))
    count();
  memo_[index] = value;
}

PickleValue *PickleMachine::memo(uint64_t index) const {
  auto found = memo_.find(index);
  if (found == memo_.end())
    throw error("memo " + std::to_string(index) + " read before it is written");
  return found->second;
}

} // namespace bertc
