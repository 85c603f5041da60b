// A trainer_state.json's state for the checkpoint tests (checkpoint_test.cpp,
// trainer_state_test.cpp), and their comparison of two states.
#pragma once

#include "bertc/runtime/checkpoint.h"

#include <gtest/gtest.h>

namespace bertc::testing {

/// A state with every field away from its default.
inline TrainerState sampleState() {
  TrainerState state;
  state.globalStep = 12;
  state.maxSteps = 30;
  state.seed = 18446744073709551614u;
  state.batch = 32;
  state.microBatch = 8;
  state.accumulation = 4;
  state.seqLen = 128;
  state.shuffle = true;
  state.groupByLength = true;
  state.lr = 2e-5f;
  state.schedule = LrSchedule::Linear;
  state.warmupSteps = 3;
  state.dataPath = "data/train.jsonl";
  state.dataRows = 300;
  state.dataFingerprint = 0xfedcba9876543210u;
  state.data = {2, 96, {1000, 1536}};
  state.lossScaler = {2048.0f, 7, 5};
  return state;
}

/// Expects `a` and `b` to be one state, every field compared.
inline void expectSameState(const TrainerState &a, const TrainerState &b) {
  EXPECT_EQ(formatTrainerState(a), formatTrainerState(b));
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.dataFingerprint, b.dataFingerprint);
  EXPECT_EQ(a.data.cursor, b.data.cursor);
  EXPECT_EQ(a.data.tokens.computed, b.data.tokens.computed);
  EXPECT_EQ(a.lossScaler.scale, b.lossScaler.scale);
  EXPECT_EQ(a.lossScaler.goodStepsInRow, b.lossScaler.goodStepsInRow);
  EXPECT_EQ(a.lossScaler.skipped, b.lossScaler.skipped);
}

} // namespace bertc::testing
