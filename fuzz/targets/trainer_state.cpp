// Fuzzes trainer_state.json: any bytes parsed as a checkpoint's state. A state that parses
// must write back to text that parses to the same text again (what --resume then saves).
// Only CheckpointError may come out.

#include "fuzz_files.h"

#include "bertc/runtime/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  bertc::TrainerState state;
  try {
    state = bertc::parseTrainerState(text, "trainer_state.json");
  } catch (const bertc::CheckpointError &) {
    return 0;
  }
  std::string written = bertc::formatTrainerState(state);
  if (bertc::formatTrainerState(bertc::parseTrainerState(written, "written.json")) != written)
    __builtin_trap();
  bertc::checkResumable(state, state, /*lossScaling=*/true, "trainer_state.json");
  return 0;
}
