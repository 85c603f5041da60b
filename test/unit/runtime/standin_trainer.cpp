// A hand-written stand-in for the code bertc generates, linked with bertc_runtime so the
// driver (trainer_main.cpp) can be tested end to end without the compiler. The model is a
// 2-class linear classifier over one feature per row: its mean input id (over the attention
// mask) divided by the vocabulary, times a frozen scale. The loss is written out here; the
// update is the runtime's cpu::adamwUpdate, as generated code calls it. Its vocabulary file
// is "standin-vocab.txt" in the working directory, which tests create where they need it.
#include "bertc/abi/trainer.h"
#include "bertc/runtime/cpu_kernels.h"

#include <cmath>

using namespace bertc;

namespace {

constexpr int64_t kClasses = 2;
constexpr int64_t kBatch = 8, kMicroBatch = 4, kAccumulation = 2, kSeqLen = 8;
constexpr int64_t kVocab = 100;

// Arena layout: byte offsets, every slot 64-byte aligned.
constexpr size_t kWeight = 0;       // classifier.weight fp32 [2, 1]
constexpr size_t kBias = 64;        // classifier.bias fp32 [2]
constexpr size_t kScale = 128;      // bert.embeddings.LayerNorm.weight fp32 [1], frozen
constexpr size_t kWeightGrad = 192; // fp32 [2, 1]
constexpr size_t kBiasGrad = 256;   // fp32 [2]
constexpr size_t kWeightM = 320, kWeightV = 384, kBiasM = 448, kBiasV = 512; // fp32 [2]
constexpr size_t kInputIds = 576;                                  // int32 [4, 8] = 128 bytes
constexpr size_t kTokenTypes = 704, kPositions = 832, kMask = 960; // int32 [4, 8]
constexpr size_t kLabels = 1088;                                   // int32 [4]
constexpr size_t kLoss = 1152;                                     // fp32 scalar
constexpr size_t kScratch = 1216; // empty: no attention, so no scratch (as bertc plans it)
constexpr size_t kArenaBytes = 1280;

// Variants: one claims an arena no machine can provide (2^62 bytes); one says it was built
// against another version of the trainer ABI.
#ifdef BERTC_STANDIN_UNALLOCATABLE_ARENA
constexpr size_t kPlannedArenaBytes = size_t(1) << 62;
#else
constexpr size_t kPlannedArenaBytes = kArenaBytes;
#endif

const ParamSlot kParams[] = {
    {"classifier.weight",
     2,
     {kClasses, 1},
     kClasses,
     kWeight,
     true,
     kWeightGrad,
     kWeightM,
     kWeightV,
     true,
     ParamInit::Normal},
    {"classifier.bias",
     1,
     {kClasses},
     kClasses,
     kBias,
     true,
     kBiasGrad,
     kBiasM,
     kBiasV,
     false,
     ParamInit::Zeros},
    {"bert.embeddings.LayerNorm.weight", 1, {1}, 1, kScale, false, 0, 0, 0, false, ParamInit::Ones},
};

const InputSlot kInputs[] = {{"input_ids", kInputIds},
                             {"token_type_ids", kTokenTypes},
                             {"position_ids", kPositions},
                             {"attention_mask", kMask}};

template <class T> T *slot(const StepContext &ctx, size_t offset) {
  return reinterpret_cast<T *>(ctx.arena + offset);
}

const TrainerPlan kPlan = {
    .arenaBytes = kPlannedArenaBytes,
    .params = kParams,
    .numParams = sizeof kParams / sizeof kParams[0],
    .parameters = {0, 192},
    .gradients = {192, 128},
    .optimizerState = {320, 256},
    .scratch = {kScratch, 0},
    .inputs = {kInputs, 4, kLabels, kLoss},
    .train = {.batch = kBatch,
              .microBatch = kMicroBatch,
              .accumulation = kAccumulation,
              .seqLen = kSeqLen,
              .epochs = 2,
              .steps = 0,
              .lr = 0.1f,
              .weightDecay = 0.01f,
              .beta1 = 0.9f,
              .beta2 = 0.999f,
              .eps = 1e-8f,
              .schedule = LrSchedule::Linear,
              .warmup = 0.1f,
              .seed = 7,
              .shuffle = true,
              .numLabels = kClasses,
              .initializerRange = 0.02f,
              .vocab = kVocab,
              .typeVocab = 2,
              .task = TaskKind::Classification,
              .maxGradNorm = 0.0f},
    .data = {.vocabFile = "standin-vocab.txt", .textField = "sentence"},
    .hfConfigJson = R"({"architectures": ["BertForSequenceClassification"], )"
                    R"("model_type": "bert", "num_labels": 2, "vocab_size": 100})",
    .masterWeights = {0, 0},
    .lossScaling = false,
};

/// Row b's feature: its mean input id over the attention mask, over the vocabulary, scaled.
double rowFeature(const StepContext &ctx, int64_t b) {
  const int32_t *ids = slot<int32_t>(ctx, kInputIds);
  const int32_t *mask = slot<int32_t>(ctx, kMask);
  double idSum = 0, tokens = 0;
  for (int64_t t = 0; t < ctx.seq; ++t) {
    idSum += mask[b * ctx.seq + t] * ids[b * ctx.seq + t];
    tokens += mask[b * ctx.seq + t];
  }
  return *slot<float>(ctx, kScale) * idSum / tokens / kVocab;
}

/// This micro-batch's share of the step's mean cross-entropy (its sum over rows divided by
/// the step's row count), and its gradient added into the gradient slots.
void microStep(const StepContext &ctx) {
  const int32_t *labels = slot<int32_t>(ctx, kLabels);
  const float *weight = slot<float>(ctx, kWeight);
  const float *bias = slot<float>(ctx, kBias);
  float *weightGrad = slot<float>(ctx, kWeightGrad);
  float *biasGrad = slot<float>(ctx, kBiasGrad);
  double loss = 0;
  for (int64_t b = 0; b < ctx.batch; ++b) {
    double feature = rowFeature(ctx, b);
    double logits[kClasses], maxLogit = -INFINITY, expSum = 0;
    for (int64_t c = 0; c < kClasses; ++c) {
      logits[c] = weight[c] * feature + bias[c];
      maxLogit = std::fmax(maxLogit, logits[c]);
    }
    for (int64_t c = 0; c < kClasses; ++c)
      expSum += std::exp(logits[c] - maxLogit);
    loss += maxLogit + std::log(expSum) - logits[labels[b]];
    for (int64_t c = 0; c < kClasses; ++c) {
      double probability = std::exp(logits[c] - maxLogit) / expSum;
      double dlogit = (probability - (c == labels[b])) / ctx.lossNormalizer;
      weightGrad[c] += float(dlogit * feature);
      biasGrad[c] += float(dlogit);
    }
  }
  *slot<float>(ctx, kLoss) = float(loss / ctx.lossNormalizer);
}

/// The forward alone: each row's logits copied out, and the loss as microStep writes it.
void evalStep(const StepContext &ctx, float *logits) {
  const int32_t *labels = slot<int32_t>(ctx, kLabels);
  const float *weight = slot<float>(ctx, kWeight);
  const float *bias = slot<float>(ctx, kBias);
  double loss = 0;
  for (int64_t b = 0; b < ctx.batch; ++b) {
    double feature = rowFeature(ctx, b), maxLogit = -INFINITY, expSum = 0;
    float *row = logits + b * kClasses;
    for (int64_t c = 0; c < kClasses; ++c) {
      row[c] = float(weight[c] * feature + bias[c]);
      maxLogit = std::fmax(maxLogit, row[c]);
    }
    for (int64_t c = 0; c < kClasses; ++c)
      expSum += std::exp(row[c] - maxLogit);
    loss += maxLogit + std::log(expSum) - row[labels[b]];
  }
  *slot<float>(ctx, kLoss) = float(loss / ctx.lossNormalizer);
}

/// torch.optim.AdamW on every trainable parameter, through the runtime's kernel.
void optimizerStep(const StepContext &ctx) {
  const TrainSettings &train = kPlan.train;
  for (const ParamSlot &param : kParams) {
    if (!param.trainable)
      continue;
    cpu::adamwUpdate(slot<float>(ctx, param.offset), slot<float>(ctx, param.gradOffset),
                     slot<float>(ctx, param.adamMOffset), slot<float>(ctx, param.adamVOffset),
                     param.numel,
                     {ctx.lr, train.beta1, train.beta2, train.eps,
                      param.weightDecay ? train.weightDecay : 0.0f, ctx.step});
  }
}

const CpuSteps kSteps = {microStep, optimizerStep, evalStep};
#ifdef BERTC_STANDIN_OTHER_ABI
constexpr uint32_t kAbiVersion = kTrainerAbiVersion + 1;
#else
constexpr uint32_t kAbiVersion = kTrainerAbiVersion;
#endif
const Trainer kTrainer = {kAbiVersion, &kPlan, &kSteps, nullptr};

} // namespace

extern "C" const Trainer *bertc_trainer() { return &kTrainer; }
