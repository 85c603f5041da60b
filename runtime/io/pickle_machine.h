// The opcode machine of a restricted unpickler: it interprets the opcodes a pickled dict
// of tensors uses (protocols 2 to 5, as torch.save writes them) into values it owns, and
// leaves what globals, persistent ids and calls mean to a subclass, so that nothing is
// imported or run that the subclass does not evaluate itself.
#pragma once

#include "bertc/runtime/torch_checkpoint.h"

#include <cstdint>
#include <deque>
#include <istream>
#include <map>
#include <string>
#include <vector>

namespace bertc {

/// A value on the machine's stack or in its memo, owned by the machine (a pickle may make a
/// list that holds itself).
struct PickleValue {
  enum class Kind { None, Bool, Int, Float, String, Tuple, List, Dict, Global, Storage, Tensor };
  Kind kind = Kind::None;
  bool wide = false;                ///< Int: a LONG1 beyond int64 (`integer` is 0 then)
  int64_t integer = 0;              ///< Bool, Int
  double real = 0;                  ///< Float
  std::string text;                 ///< String; Global as "module.name"; Tensor: see below
  std::vector<PickleValue *> items; ///< Tuple, List; Dict as key, value, key, value, ...
  TorchTensor tensor;               ///< Tensor; Storage: its dtype and storageKey
  // A Tensor's `text` says why torch.load would refuse it ("" when it would not), which
  // the reader reports with the tensor's name once the dict names it.
};

class PickleMachine {
public:
  /// Reads the pickle from `in`'s position, never past `end` (a file offset); `path` is
  /// for messages.
  PickleMachine(std::istream &in, uint64_t end, const std::string &path);
  virtual ~PickleMachine() = default;

  /// Runs the pickle to its STOP and returns its value, leaving `in` just past the STOP;
  /// throws TorchCheckpointError.
  PickleValue *run();

protected:
  /// GLOBAL and STACK_GLOBAL: the value `module.name` stands for, or an error.
  virtual PickleValue *global(const std::string &module, const std::string &name) = 0;
  /// BINPERSID: the value a persistent id stands for.
  virtual PickleValue *persistent(PickleValue &id) = 0;
  /// REDUCE: `callable` (a Global) applied to `args`.
  virtual PickleValue *call(const PickleValue &callable,
                            const std::vector<PickleValue *> &args) = 0;

  TorchCheckpointError error(const std::string &message) const;
  /// A new value of `kind`, counted against the machine's bound (count()).
  PickleValue *make(PickleValue::Kind kind);

private:
  /// Counts one more of what the machine holds (a value made, a MARK, a memo entry, a memo
  /// value pushed again); an error past a bound no state dict's pickle comes near.
  void count();
  /// Reads the next chunk of the pickle (at most 64 KiB, never past `end_`) into buffer_.
  void refill();
  uint8_t byte();
  void bytes(char *out, uint64_t length);
  uint64_t number(int width);
  std::string line();
  void pushInt(int64_t integer, PickleValue::Kind kind = PickleValue::Kind::Int);
  void memoize(uint64_t index);
  void pushFloat();
  void pushLong(size_t width);
  void pushString(uint64_t length);
  void pushGlobal(const std::string &module, const std::string &name);
  void reduce();
  void append(PickleValue::Kind kind, const std::vector<PickleValue *> &items);
  PickleValue *tuple(std::vector<PickleValue *> items);
  void push(PickleValue *value) { stack_.push_back(value); }
  PickleValue *top() const;
  PickleValue *pop();
  std::vector<PickleValue *> popMark();
  std::vector<PickleValue *> popLast(size_t count);
  PickleValue *memo(uint64_t index) const;

  std::istream &in_;
  uint64_t end_;
  std::string path_;
  /// The pickle's bytes are read a chunk at a time (a read of the stream per byte costs a
  /// seek each): buffer_[next_, filled_) are the unread ones, and `streamAt_` is the file
  /// offset of buffer_[filled_], where the stream stands.
  std::vector<char> buffer_;
  size_t next_ = 0, filled_ = 0;
  uint64_t streamAt_ = 0;
  size_t counted_ = 0; ///< what count() has counted
  std::vector<PickleValue *> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, PickleValue *> memo_;
  std::deque<PickleValue> values_; ///< every value made, at a stable address
};

} // namespace bertc
