// The opcode machine of a restricted unpickler: it interprets the opcodes a pickled dict
// of tensors uses (protocols 2 to 5, as torch.save writes them) into values it owns, and
// leaves what globals, persistent ids and calls mean to a subclass, so that nothing is
// imported or run that the subclass does not evaluate itself.
#pragma once

#include "bertc/runtime/torch_checkpoint.h"

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
  int64_t integer = 0;              ///< Bool, Int (an Int too wide for 64 bits is kept as 0)
  double real = 0;                  ///< Float
  std::string text;                 ///< String; Global as "module.name"
  std::vector<PickleValue *> items; ///< Tuple, List; Dict as key, value, key, value, ...
  TorchTensor tensor;               ///< Tensor; Storage: its dtype and storageKey
};

class PickleMachine {
public:
  /// Reads the pickle from `in`'s position, never past `end` (a file offset); `path` is
  /// for messages.
  PickleMachine(std::istream &in, uint64_t end, const std::string &path);
  virtual ~PickleMachine() = default;

  /// Runs the pickle to its STOP and returns its value; throws TorchCheckpointError.
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
  /// A new value of `kind`; an error past a bound no state dict's pickle comes near.
  PickleValue *make(PickleValue::Kind kind);

private:
  uint8_t byte();
  uint64_t number(int width);
  std::string line();
  void pushInt(int64_t integer, PickleValue::Kind kind = PickleValue::Kind::Int);
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
  std::vector<PickleValue *> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, PickleValue *> memo_;
  std::deque<PickleValue> values_; ///< every value made, at a stable address
};

} // namespace bertc
