//===- BertAttributes.cpp - the bert dialect's attributes -----------------===//
//
// `#bert.train` prints and parses its values from train_settings.def, so that the list of
// settings is written once; `#bert.plan` uses the generated struct format. Both verify
// what a value alone can tell; `bert.train` and `bert.plan` on an op must hold them.
//
//===----------------------------------------------------------------------===//

#include "bert/BertDialect.h"
#include "bert/Placement.h"

#include "bertc/abi/quantized_weight_layout.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bert;

#include "bert/BertEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "bert/BertAttributes.cpp.inc"

namespace mlir::bert {

FailureOr<ByteRange> parseByteRange(AsmParser &parser) {
  ByteRange range;
  if (parser.parseLSquare() || parser.parseInteger(range.offset) || parser.parseComma() ||
      parser.parseInteger(range.bytes) || parser.parseRSquare())
    return failure();
  return range;
}

namespace {

constexpr std::pair<bertc::LrSchedule, StringLiteral> kSchedules[] = {
    {bertc::LrSchedule::Constant, "constant"}, {bertc::LrSchedule::Linear, "linear"}};
constexpr std::pair<bertc::TaskKind, StringLiteral> kTasks[] = {
    {bertc::TaskKind::Classification, "classification"},
    {bertc::TaskKind::Regression, "regression"},
    {bertc::TaskKind::Span, "span"},
    {bertc::TaskKind::TokenClassification, "token-classification"},
    {bertc::TaskKind::CausalLM, "causal_lm"}};

template <typename E, size_t N>
StringRef spellingIn(const std::pair<E, StringLiteral> (&names)[N], E value) {
  for (auto [enumerator, name] : names)
    if (enumerator == value)
      return name;
  llvm_unreachable("an enumerator without a spelling");
}
template <typename E, size_t N>
std::optional<E> parseIn(const std::pair<E, StringLiteral> (&names)[N], StringRef text) {
  for (auto [enumerator, name] : names)
    if (name == text)
      return enumerator;
  return std::nullopt;
}

/// A setting as llvm::hash_combine takes it: a double by its bits.
template <typename T> auto hashable(T value) { return value; }
uint64_t hashable(double value) { return llvm::bit_cast<uint64_t>(value); }

// One setting's value in `#bert.train`, by its type.
void printValue(AsmPrinter &printer, int64_t value) { printer << value; }
void printValue(AsmPrinter &printer, uint64_t value) { printer << value; }
void printValue(AsmPrinter &printer, double value) { printer.printFloat(llvm::APFloat(value)); }
void printValue(AsmPrinter &printer, bool value) { printer << (value ? "true" : "false"); }
void printValue(AsmPrinter &printer, bertc::LrSchedule value) {
  printer << '"' << spelling(value) << '"';
}
void printValue(AsmPrinter &printer, bertc::TaskKind value) {
  printer << '"' << spelling(value) << '"';
}

ParseResult parseValue(AsmParser &parser, int64_t &value) { return parser.parseInteger(value); }
ParseResult parseValue(AsmParser &parser, uint64_t &value) { return parser.parseInteger(value); }
ParseResult parseValue(AsmParser &parser, double &value) { return parser.parseFloat(value); }
ParseResult parseValue(AsmParser &parser, bool &value) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return value = true, success();
  if (succeeded(parser.parseOptionalKeyword("false")))
    return value = false, success();
  return parser.emitError(parser.getCurrentLocation(), "expected true or false");
}
template <typename E>
ParseResult parseEnum(AsmParser &parser, E &value, std::optional<E> (*parse)(StringRef),
                      StringRef what) {
  std::string text;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseString(&text))
    return failure();
  std::optional<E> parsed = parse(text);
  if (!parsed)
    return parser.emitError(loc) << "'" << text << "' is not a " << what;
  value = *parsed;
  return success();
}
ParseResult parseValue(AsmParser &parser, bertc::LrSchedule &value) {
  return parseEnum(parser, value, parseLrSchedule, "learning-rate schedule");
}
ParseResult parseValue(AsmParser &parser, bertc::TaskKind &value) {
  return parseEnum(parser, value, parseTaskKind, "task");
}

} // namespace

StringRef spelling(bertc::LrSchedule schedule) { return spellingIn(kSchedules, schedule); }
StringRef spelling(bertc::TaskKind task) { return spellingIn(kTasks, task); }
std::optional<bertc::LrSchedule> parseLrSchedule(StringRef text) {
  return parseIn(kSchedules, text);
}
std::optional<bertc::TaskKind> parseTaskKind(StringRef text) { return parseIn(kTasks, text); }

bool TrainValues::operator==(const TrainValues &other) const {
  bool equal = true;
#define BERTC_SETTING(type, field, key) equal = equal && field == other.field;
#define BERTC_PLANNED_SETTING(type, field, key)
#include "bertc/abi/train_settings.def"
#undef BERTC_SETTING
  return equal;
}

llvm::hash_code hash_value(const TrainValues &values) {
  llvm::hash_code hash(0);
#define BERTC_SETTING(type, field, key) hash = llvm::hash_combine(hash, hashable(values.field));
#define BERTC_PLANNED_SETTING(type, field, key)
#include "bertc/abi/train_settings.def"
#undef BERTC_SETTING
  return hash;
}

} // namespace mlir::bert

//===----------------------------------------------------------------------===//
// #bert.train
//===----------------------------------------------------------------------===//

void TrainAttr::print(AsmPrinter &printer) const {
  const TrainValues &values = getValues();
  StringRef separator = "";
  printer << '<';
#define BERTC_SETTING(type, field, key)                                                            \
  printer << separator << key << " = ";                                                            \
  printValue(printer, values.field);                                                               \
  separator = ", ";
#define BERTC_PLANNED_SETTING(type, field, key)
#include "bertc/abi/train_settings.def"
#undef BERTC_SETTING
  printer << '>';
}

Attribute TrainAttr::parse(AsmParser &parser, Type) {
  TrainValues values;
  llvm::StringSet<> seen;
  SMLoc start = parser.getCurrentLocation();
  auto parseSetting = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    std::string key;
    if (parser.parseKeywordOrString(&key) || parser.parseEqual())
      return failure();
    if (!seen.insert(key).second)
      return parser.emitError(loc) << "'" << key << "' is given twice";
#define BERTC_SETTING(type, field, key_)                                                           \
  if (key == key_)                                                                                 \
    return parseValue(parser, values.field);
#define BERTC_PLANNED_SETTING(type, field, key)
#include "bertc/abi/train_settings.def"
#undef BERTC_SETTING
    return parser.emitError(loc) << "'" << key << "' is not a [train] setting";
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::LessGreater, parseSetting))
    return {};
#define BERTC_SETTING(type, field, key)                                                            \
  if (!seen.contains(key)) {                                                                       \
    parser.emitError(start) << "#bert.train needs '" << key << "'";                                \
    return {};                                                                                     \
  }
#define BERTC_PLANNED_SETTING(type, field, key)
#include "bertc/abi/train_settings.def"
#undef BERTC_SETTING
  return parser.getChecked<TrainAttr>(parser.getContext(), values);
}

LogicalResult TrainAttr::verify(function_ref<InFlightDiagnostic()> emitError, TrainValues values) {
  if (values.batch < 1)
    return emitError() << "#bert.train batch must be positive, not " << values.batch;
  if (values.epochs < 0 || values.steps < 0)
    return emitError() << "#bert.train epochs and steps must not be negative";
  if (values.numLabels < 1 || values.vocab < 1 || values.typeVocab < 1)
    return emitError() << "#bert.train num_labels, vocab and type_vocab must be positive";
  return success();
}

//===----------------------------------------------------------------------===//
// #bert.plan
//===----------------------------------------------------------------------===//

SmallVector<std::pair<StringRef, ByteRange>, 11> PlanAttr::getRegions() const {
  return {{"parameters", getParameters()},
          {"master_weights", getMasterWeights()},
          {"gradients", getGradients()},
          {"optimizer_state", getOptimizerState()},
          {"scratch", getScratch()},
          {"inputs", getInputs()},
          {"activations", getActivations()},
          {"gemm_workspace", getGemmWorkspace()},
          {"host_activations", getHostActivations()},
          {"host_parameters", getHostParameters()},
          {"frozen_masters", getFrozenMasters()}};
}

/// Which side of the device arena's end each region lies on: host memory holds the frozen
/// masters (last), offloaded checkpoints' host copies, the embedding tables the device's
/// gathers read in place and, when the host's AdamW alone touches them, the master weights
/// and optimizer state (together); the device holds the rest.
static LogicalResult verifyPlacement(function_ref<InFlightDiagnostic()> emitError,
                                     ArrayRef<std::pair<StringRef, ByteRange>> regions,
                                     int64_t deviceBytes) {
  std::optional<bool> optimizerOnHost;
  for (auto [name, range] : regions) {
    if (range.bytes == 0)
      continue;
    bool onHost = range.offset >= deviceBytes, onDevice = range.end() <= deviceBytes;
    auto misplaced = [&, name = name, range = range](StringRef where) {
      return emitError() << "#bert.plan region '" << name << "' [" << range.offset << ", "
                         << range.end() << ") must lie " << where
                         << " the host-resident end of the arena (from " << deviceBytes << ")";
    };
    if (name == "frozen_masters") {
      bool last = llvm::all_of(regions, [&](const std::pair<StringRef, ByteRange> &other) {
        return other.first == name || other.second.bytes == 0 || other.second.end() <= range.offset;
      });
      if (!onHost || !last)
        return misplaced("last, in");
      continue;
    }
    if (name == "host_activations" || name == "host_parameters") {
      if (!onHost)
        return misplaced("in");
      continue;
    }
    bool optimizer = name == "master_weights" || name == "optimizer_state";
    if (!optimizer && !onDevice)
      return misplaced("before");
    if (optimizer && !onHost && !onDevice)
      return misplaced("wholly before or wholly in");
    if (optimizer && optimizerOnHost && *optimizerOnHost != onHost)
      return emitError() << "#bert.plan regions 'master_weights' and 'optimizer_state' must "
                            "lie on the same side of the host-resident end of the arena (from "
                         << deviceBytes << ")";
    if (optimizer)
      optimizerOnHost = onHost;
  }
  return success();
}

LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t arenaBytes,
                               ByteRange parameters, ByteRange masterWeights, ByteRange gradients,
                               ByteRange optimizerState, ByteRange scratch, ByteRange inputs,
                               ByteRange activations, ByteRange gemmWorkspace,
                               int64_t lowerBoundBytes, int64_t loss, int64_t hostBytes,
                               ByteRange frozenMasters, ByteRange hostActivations,
                               ByteRange hostParameters) {
  if (arenaBytes < 0)
    return emitError() << "#bert.plan arena_bytes must not be negative";
  if (hostBytes < 0 || hostBytes > arenaBytes)
    return emitError() << "#bert.plan host_bytes " << hostBytes << " is not in [0, arena_bytes]";
  int64_t deviceBytes = arenaBytes - hostBytes;
  std::pair<StringRef, ByteRange> regions[] = {{"parameters", parameters},
                                               {"master_weights", masterWeights},
                                               {"gradients", gradients},
                                               {"optimizer_state", optimizerState},
                                               {"scratch", scratch},
                                               {"inputs", inputs},
                                               {"activations", activations},
                                               {"gemm_workspace", gemmWorkspace},
                                               {"host_activations", hostActivations},
                                               {"host_parameters", hostParameters},
                                               {"frozen_masters", frozenMasters}};
  for (auto [name, range] : regions) {
    int64_t end;
    if (llvm::AddOverflow(range.offset, range.bytes, end))
      end = std::numeric_limits<int64_t>::max();
    if (range.offset < 0 || range.bytes < 0 || end > arenaBytes)
      return emitError() << "#bert.plan region '" << name << "' [" << range.offset << ", " << end
                         << ") is not inside the arena of " << arenaBytes << " bytes";
  }
  if (failed(verifyPlacement(emitError, regions, deviceBytes)))
    return failure();
  StringRef hostNote = hostBytes > 0 ? " before its host-resident end" : "";
  if (lowerBoundBytes < 0 || lowerBoundBytes > deviceBytes)
    return emitError() << "#bert.plan lower_bound_bytes " << lowerBoundBytes
                       << " is not in [0, arena_bytes - host_bytes]";
  if (loss < 0 || loss >= deviceBytes)
    return emitError() << "#bert.plan loss " << loss << " is not an offset in the arena"
                       << hostNote;
  return success();
}

//===----------------------------------------------------------------------===//
// The dialect's attributes on ops
//===----------------------------------------------------------------------===//

void BertDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "bert/BertAttributes.cpp.inc"
      >();
}

LogicalResult ParamSlotsAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t value,
                                     std::optional<int64_t> master, std::optional<int64_t> grad,
                                     std::optional<int64_t> adamM, std::optional<int64_t> adamV,
                                     std::optional<int64_t> adamMAbsmax,
                                     std::optional<int64_t> adamVAbsmax) {
  std::optional<int64_t> offsets[] = {value, master, grad, adamM, adamV, adamMAbsmax, adamVAbsmax};
  for (auto [slot, offset] : llvm::zip_equal(kParamSlots, offsets))
    if (offset && *offset < 0)
      return emitError() << "a parameter's " << slotName(slot)
                         << " slot must be at an offset of at least 0, got " << *offset;
  return success();
}

LogicalResult QuantizedWeightAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                          WeightFormat, ArrayRef<int64_t> shape) {
  if (shape.size() != 2 || shape[0] < 1 || shape[1] < 1)
    return emitError() << "a quantized weight is a matrix [out, in] of at least one value";
  return success();
}

int64_t QuantizedWeightAttr::getNumValues() const { return getShape()[0] * getShape()[1]; }

int64_t QuantizedWeightAttr::getBytes() const {
  switch (getFormat()) {
  case WeightFormat::Nf4:
    return bertc::nf4Layout(getNumValues(), /*nested=*/false).bytes;
  case WeightFormat::Nf4DoubleQuant:
    return bertc::nf4Layout(getNumValues(), /*nested=*/true).bytes;
  case WeightFormat::Int8Rows:
    return bertc::int8RowsLayout(getShape()[0], getShape()[1]).bytes;
  }
  llvm_unreachable("every weight format has a layout");
}

LogicalResult BertDialect::verifyOperationAttribute(Operation *op, NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (failed(verifyPlacementAttribute(op, attribute)))
    return failure();
  Attribute value = attribute.getValue();
  // The module's bounds and choices, each of one kind.
  if (name == "bert.max_batch" || name == "bert.max_seq") {
    auto bound = dyn_cast<IntegerAttr>(value);
    if (!bound || !bound.getType().isInteger(64) || bound.getInt() < 1)
      return op->emitError() << "'" << name << "' must be an i64 of at least 1";
  }
  if (name == "bert.precision") {
    auto precision = dyn_cast<StringAttr>(value);
    if (!precision || !llvm::is_contained({"fp32", "bf16", "fp16"}, precision.getValue()))
      return op->emitError() << "'" << name << "' must be \"fp32\", \"bf16\" or \"fp16\"";
  }
  if ((name == "bert.optimizer_on_host" || name == "bert.time_ops" || name == "bert.recomputed") &&
      !isa<UnitAttr>(value))
    return op->emitError() << "'" << name << "' must be a unit attribute";
  if (name == "bert.hf_config" && !isa<StringAttr>(value))
    return op->emitError() << "'" << name << "' must be a string (config.json's text)";
  if (name == "bert.adapter_config" && !isa<StringAttr>(value))
    return op->emitError() << "'" << name << "' must be a string (adapter_config.json's text)";
  if (name == "bert.train" && !isa<TrainAttr>(attribute.getValue()))
    return op->emitError("'bert.train' must be a #bert.train attribute");
  if (name == "bert.plan" && !isa<PlanAttr>(attribute.getValue()))
    return op->emitError("'bert.plan' must be a #bert.plan attribute");
  return success();
}
