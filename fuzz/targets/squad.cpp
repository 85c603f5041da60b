// Fuzzes the SQuAD reader and its windows: any bytes as a SQuAD JSON file, loaded as the
// span task loads it (features at a short seq_len, so that contexts span windows, with and
// without questions cut), then every window's every answer span mapped back to its
// context text. Only SquadError, DataError and TokenizerError may come out.

#include "fuzz_files.h"

#include "bertc/runtime/task_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = bertc::fuzz::writeInputFile(data, size, "train.json");
  bertc::TaskData task;
  bertc::DataSettings settings{{}, {bertc::fuzz::sampleVocabPath()}, {}};
  settings.squad.docStride = 4;
  if (size % 2)
    settings.squad.maxQueryLength = 6;
  try {
    task = bertc::loadTaskData(bertc::TaskKind::Span, path, {24, 2, 64, 2}, settings);
  } catch (const bertc::SquadError &) {
    return 0;
  } catch (const bertc::DataError &) {
    return 0;
  } catch (const bertc::TokenizerError &) {
    return 0;
  }
  const bertc::SquadFeatures &features = task.features;
  for (size_t feature = 0; feature < features.features.size(); ++feature) {
    size_t tokens = features.features[feature].inputIds.size();
    for (size_t start = 0; start <= tokens; ++start)
      for (size_t end = start; end <= std::min(tokens, start + 3); ++end)
        (void)bertc::predictedAnswerText(*task.squad, features, feature, start, end);
  }
  return 0;
}
