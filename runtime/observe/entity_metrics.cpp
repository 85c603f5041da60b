// seqeval's get_entities (default mode, conlleval's chunk rules) and its micro-averaged
// precision, recall and F1 (entity_metrics.h).
#include "bertc/runtime/entity_metrics.h"

#include <set>
#include <string_view>
#include <tuple>

namespace bertc {

namespace {

/// (type, first, last) of an entity, positions counted over the sentences one after another.
using Entity = std::tuple<std::string, size_t, size_t>;

/// A tag's prefix ('O', 'B', 'I', 'E', 'S') and type ("_" when it has none), as
/// get_entities splits "B-PER": the first character, and what follows its first '-'.
std::pair<char, std::string> splitTag(std::string_view tag) {
  char prefix = tag.empty() ? 'O' : tag[0];
  std::string_view rest = tag.empty() ? tag : tag.substr(1);
  size_t dash = rest.find('-');
  std::string type(dash == std::string_view::npos ? rest : rest.substr(dash + 1));
  return {prefix, type.empty() ? "_" : type};
}

bool endsChunk(char previous, char tag, const std::string &previousType, const std::string &type) {
  if (previous == 'E' || previous == 'S')
    return true;
  if ((previous == 'B' || previous == 'I') && (tag == 'B' || tag == 'S' || tag == 'O'))
    return true;
  return previous != 'O' && previous != '.' && previousType != type;
}

bool startsChunk(char previous, char tag, const std::string &previousType,
                 const std::string &type) {
  if (tag == 'B' || tag == 'S')
    return true;
  if ((previous == 'E' || previous == 'S' || previous == 'O') && (tag == 'E' || tag == 'I'))
    return true;
  return tag != 'O' && tag != '.' && previousType != type;
}

/// The entities of the sentences, each sentence followed by an "O" as get_entities joins
/// nested lists.
std::set<Entity> entitiesOf(const std::vector<std::vector<std::string>> &sentences) {
  std::set<Entity> entities;
  char previous = 'O';
  std::string previousType;
  size_t begin = 0, position = 0;
  auto visit = [&](std::string_view tag) {
    auto [prefix, type] = splitTag(tag);
    if (endsChunk(previous, prefix, previousType, type))
      entities.insert({previousType, begin, position - 1});
    if (startsChunk(previous, prefix, previousType, type))
      begin = position;
    previous = prefix;
    previousType = type;
    ++position;
  };
  for (const std::vector<std::string> &sentence : sentences) {
    for (const std::string &tag : sentence)
      visit(tag);
    visit("O");
  }
  return entities;
}

} // namespace

bool areEntityTags(const std::vector<std::string> &names) {
  if (names.empty())
    return false;
  for (const std::string &name : names)
    if (name != "O" &&
        (name.size() < 3 || std::string_view("BIES").find(name[0]) == std::string_view::npos ||
         name[1] != '-'))
      return false;
  return true;
}

EntityScores entityScores(const std::vector<std::vector<std::string>> &predicted,
                          const std::vector<std::vector<std::string>> &gold) {
  std::set<Entity> predictedEntities = entitiesOf(predicted), goldEntities = entitiesOf(gold);
  double correct = 0;
  for (const Entity &entity : predictedEntities)
    correct += goldEntities.count(entity);
  EntityScores scores;
  if (!predictedEntities.empty())
    scores.precision = correct / double(predictedEntities.size());
  if (!goldEntities.empty())
    scores.recall = correct / double(goldEntities.size());
  if (scores.precision + scores.recall > 0)
    scores.f1 = 2 * scores.precision * scores.recall / (scores.precision + scores.recall);
  return scores;
}

} // namespace bertc
