// Entity scores as seqeval computes them, on tag sequences whose entities are worked out
// in the comments: conlleval's chunk rules (an I- after O starts an entity, a change of
// type ends one), sentences that entities never cross, and the micro-averaged scores.
#include "bertc/runtime/entity_metrics.h"

#include <gtest/gtest.h>

namespace bertc {
namespace {

using Sentences = std::vector<std::vector<std::string>>;

TEST(EntityMetrics, CountsEntitiesWhoseTypeAndSpanMatch) {
  // Gold: PER 0-1, LOC 3; predicted: PER 0-1, ORG 3. One of two right on each side.
  EntityScores scores =
      entityScores({{"B-PER", "I-PER", "O", "B-ORG"}}, {{"B-PER", "I-PER", "O", "B-LOC"}});
  EXPECT_DOUBLE_EQ(scores.precision, 0.5);
  EXPECT_DOUBLE_EQ(scores.recall, 0.5);
  EXPECT_DOUBLE_EQ(scores.f1, 0.5);
  // A span one token short is wrong: predicted PER 0 and LOC 3 against PER 0-1 and LOC 3:
  // P = 1/2, R = 1/2; with an extra predicted MISC 2: P = 1/3, F1 = 2·(1/3)(1/2) / (5/6).
  scores = entityScores({{"B-PER", "O", "B-MISC", "B-LOC"}}, {{"B-PER", "I-PER", "O", "B-LOC"}});
  EXPECT_DOUBLE_EQ(scores.precision, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(scores.recall, 0.5);
  EXPECT_DOUBLE_EQ(scores.f1, 0.4);
}

TEST(EntityMetrics, ReadsChunksAsConlleval) {
  // I-PER after O starts PER 0-1, as B-PER I-PER does.
  EXPECT_DOUBLE_EQ(entityScores({{"I-PER", "I-PER"}}, {{"B-PER", "I-PER"}}).f1, 1.0);
  // A change of type ends the entity: PER 0 and LOC 1, not one PER 0-1.
  EntityScores split = entityScores({{"B-PER", "I-LOC"}}, {{"B-PER", "I-PER"}});
  EXPECT_DOUBLE_EQ(split.precision, 0.0);
  EXPECT_DOUBLE_EQ(split.recall, 0.0);
  // B after B starts a new entity: PER 0 and PER 1, against PER 0-1.
  EXPECT_DOUBLE_EQ(entityScores({{"B-PER", "B-PER"}}, {{"B-PER", "I-PER"}}).f1, 0.0);
  // IOBES: S- is an entity of one token, E- ends one.
  EXPECT_DOUBLE_EQ(entityScores({{"S-PER", "B-LOC", "E-LOC"}}, {{"S-PER", "B-LOC", "E-LOC"}}).f1,
                   1.0);
}

TEST(EntityMetrics, EntitiesEndWithTheirSentence) {
  // Two sentences: PER 0 and PER 1 of the next, not one PER across both.
  Sentences gold = {{"B-PER"}, {"B-PER"}};
  EXPECT_DOUBLE_EQ(entityScores({{"B-PER"}, {"I-PER"}}, gold).f1, 1.0);
  // Nothing predicted, or nothing to find: 0, not a division by zero.
  EntityScores none = entityScores({{"O"}, {"O"}}, gold);
  EXPECT_DOUBLE_EQ(none.precision, 0.0);
  EXPECT_DOUBLE_EQ(none.recall, 0.0);
  EXPECT_DOUBLE_EQ(none.f1, 0.0);
}

TEST(EntityMetrics, EntityTagsAreOOrAPrefixDashAType) {
  EXPECT_TRUE(areEntityTags({"O", "B-PER", "I-PER", "E-LOC", "S-LOC"}));
  EXPECT_FALSE(areEntityTags({"LABEL_0", "LABEL_1"}));
  EXPECT_FALSE(areEntityTags({"O", "X-PER"}));
  EXPECT_FALSE(areEntityTags({"O", "B-"}));
  EXPECT_FALSE(areEntityTags({}));
}

} // namespace
} // namespace bertc
