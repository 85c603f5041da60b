// Entity-level scores of tagged sequences, as the seqeval library computes them for
// run_ner.py: an entity is a chunk of IOB/IOBES tags ("B-PER", "I-PER", ...), found by
// conlleval's rules, and precision, recall and F1 count the entities whose type, start and
// end all match.
#pragma once

#include <string>
#include <vector>

namespace bertc {

/// Whether `names` are tags entities can be read from: each "O", or a prefix B, I, E or S,
/// a '-' and a type.
bool areEntityTags(const std::vector<std::string> &names);

struct EntityScores {
  double precision = 0; ///< correct / predicted entities (0 when none is predicted)
  double recall = 0;    ///< correct / true entities (0 when there is none)
  double f1 = 0;        ///< 2·P·R / (P + R), 0 when P + R = 0
};

/// seqeval's micro-averaged precision, recall and F1 of the entities of `predicted`
/// against those of `gold`: one tag sequence per sentence, entities never crossing
/// sentences.
EntityScores entityScores(const std::vector<std::vector<std::string>> &predicted,
                          const std::vector<std::vector<std::string>> &gold);

} // namespace bertc
