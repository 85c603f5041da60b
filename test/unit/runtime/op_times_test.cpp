//===- op_times_test.cpp - the op timer's sums and table ------------------===//
//
// A timer whose clock is a script of measurements: what each optimizer step takes in, the
// step left out, the sums per name longest first, and the table's per-step figures, worked
// out by hand in the comments.
//
//===----------------------------------------------------------------------===//

#include "bertc/runtime/op_times.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

using bertc::OpTotal;

/// Each end() takes the next of `durations` as the op's time.
class ScriptedOpTimes final : public bertc::OpTimes {
public:
  explicit ScriptedOpTimes(std::vector<double> durations) : durations_(std::move(durations)) {}
  void begin(const char *op) override { current_ = op; }
  void end() override { measured_.emplace_back(current_, durations_.at(next_++)); }

private:
  std::vector<std::pair<std::string, double>> takeMeasurements() override {
    return std::exchange(measured_, {});
  }

  std::vector<double> durations_;
  size_t next_ = 0;
  std::string current_;
  std::vector<std::pair<std::string, double>> measured_;
};

/// One step: a linear, a GELU, a second linear, the optimizer step.
void runStep(bertc::OpTimes &times, bool counted) {
  for (const char *op : {"bert.linear", "bert.gelu", "bert.linear", "optimizer step"}) {
    times.begin(op);
    times.end();
  }
  times.finishStep(counted);
}

TEST(OpTimes, SumsEachNameOverTheCountedStepsLongestFirst) {
  // Step 1 (left out): 9, 9, 9, 9. Step 2: 1, 0.5, 2, 0.25. Step 3: 3, 0.5, 1, 0.75.
  ScriptedOpTimes times({9, 9, 9, 9, 1, 0.5, 2, 0.25, 3, 0.5, 1, 0.75});
  runStep(times, false);
  runStep(times, true);
  runStep(times, true);
  EXPECT_EQ(times.steps(), 2);
  std::vector<OpTotal> totals = times.totals();
  ASSERT_EQ(totals.size(), 3u);
  // bert.linear 1 + 2 + 3 + 1 = 7 in 4 runs; GELU 1 in 2; the optimizer step 1 in 2.
  EXPECT_EQ(totals[0].op, "bert.linear");
  EXPECT_EQ(totals[0].seconds, 7.0);
  EXPECT_EQ(totals[0].runs, 4);
  EXPECT_EQ(totals[1].seconds, 1.0);
  EXPECT_EQ(totals[2].seconds, 1.0);
  EXPECT_EQ(totals[1].runs, 2);
  // Equal times keep the names' order: bert.gelu before "optimizer step".
  EXPECT_EQ(totals[1].op, "bert.gelu");
  EXPECT_EQ(totals[2].op, "optimizer step");
}

TEST(OpTimes, TableGivesEachNamesSecondsShareAndRunsAStep) {
  ScriptedOpTimes times({9, 9, 9, 9, 1, 0.5, 2, 0.25, 3, 0.5, 1, 0.75});
  runStep(times, false);
  runStep(times, true);
  runStep(times, true);
  std::string table = bertc::formatOpTimes(times);
  // 9 s over 2 steps: 4.5 s a step; bert.linear 3.5 s a step (77.8%), 2 runs a step; the
  // others 0.5 s (11.1%), 1 run.
  EXPECT_NE(table.find("op times: 2 optimizer step(s) measured (the first left out), 4.500000 "
                       "s a step timed:"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("    3.500000   77.8%         2  bert.linear\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("    0.500000   11.1%         1  bert.gelu\n"), std::string::npos) << table;
  EXPECT_NE(table.find("    0.500000   11.1%         1  optimizer step\n"), std::string::npos)
      << table;
}

TEST(OpTimes, AStepLeftOutAddsNothing) {
  ScriptedOpTimes times({1, 2, 3, 4});
  runStep(times, false);
  EXPECT_EQ(times.steps(), 0);
  EXPECT_TRUE(times.totals().empty());
}

TEST(OpTimes, TheHostClockTimesWhatRunsBetweenBeginAndEnd) {
  bertc::HostOpTimes times;
  times.begin("bert.gelu");
  volatile double sink = 0;
  for (int i = 0; i < 2000000; ++i)
    sink = sink + 1.0;
  times.end();
  times.finishStep(true);
  std::vector<OpTotal> totals = times.totals();
  ASSERT_EQ(totals.size(), 1u);
  EXPECT_EQ(totals[0].op, "bert.gelu");
  EXPECT_EQ(totals[0].runs, 1);
  EXPECT_GT(totals[0].seconds, 0.0);
  EXPECT_LT(totals[0].seconds, 60.0);
}

} // namespace
