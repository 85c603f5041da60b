// The progress display's formatting: durations, the bar, rates, the recent-loss mean, the
// plain, terminal and summary lines, and what each mode writes (to a temporary file).
#include "bertc/runtime/progress.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

#include <cmath>

namespace bertc {
namespace {

TEST(Progress, Durations) {
  EXPECT_EQ(formatDuration(0), "0s");
  EXPECT_EQ(formatDuration(42.4), "42s");
  EXPECT_EQ(formatDuration(59.6), "1m00s");
  EXPECT_EQ(formatDuration(185), "3m05s");
  EXPECT_EQ(formatDuration(3720), "1h02m");
  EXPECT_EQ(formatDuration(23 * 3600 + 59 * 60 + 59), "23h59m");
  EXPECT_EQ(formatDuration(2 * 86400 + 3 * 3600 + 1), "2d03h");
  EXPECT_EQ(formatDuration(-1), "?");
  EXPECT_EQ(formatDuration(INFINITY), "?");
  EXPECT_EQ(formatDuration(NAN), "?");
}

TEST(Progress, Bar) {
  EXPECT_EQ(formatBar(0.0, 10), "..........");
  EXPECT_EQ(formatBar(0.35, 10), "###.......");
  EXPECT_EQ(formatBar(0.999, 10), "#########.") << "full only when done";
  EXPECT_EQ(formatBar(1.0, 10), "##########");
  EXPECT_EQ(formatBar(1.5, 4), "####");
  EXPECT_EQ(formatBar(-0.5, 4), "....");
  EXPECT_EQ(formatBar(NAN, 4), "....");
}

TEST(Progress, Rates) {
  EXPECT_EQ(formatRate(0.523), "0.52");
  EXPECT_EQ(formatRate(12.34), "12.3");
  EXPECT_EQ(formatRate(845.2), "845");
  EXPECT_EQ(formatRate(999.7), "1.00k") << "rounds into the next unit, not to \"1000\"";
  EXPECT_EQ(formatRate(12345), "12.3k");
  EXPECT_EQ(formatRate(4.56e6), "4.56M");
  EXPECT_EQ(formatRate(INFINITY), "?");
}

TEST(Progress, RecentMeanKeepsTheLastValues) {
  RecentMean mean(3);
  EXPECT_EQ(mean.mean(), 0.0);
  mean.push(1);
  mean.push(2);
  EXPECT_EQ(mean.mean(), 1.5);
  mean.push(3);
  mean.push(10); // drops the 1
  EXPECT_EQ(mean.mean(), 5.0);
}

TEST(Progress, Lines) {
  ProgressStatus status{3, 10, 1, 0.693147182, 0.1, 845.2, 4.2};
  EXPECT_EQ(formatStepLine(status),
            "step 3/10  loss 0.693147  lr 1.00e-01  epoch 1  845 samples/s  ETA 4s");
  EXPECT_EQ(formatTerminalLine(status, 10),
            "step 3/10 [###.......]  30%  epoch 1  loss 0.6931  lr 1.00e-01  845 samples/s  "
            "ETA 4s");
  EXPECT_EQ(formatSummary({0, 10, 10, 0.6123451, 0.3125, 1.2, 845}),
            "done: step 10/10, loss 0.612345, padding 31.2% of tokens, 1.20s, 845 samples/s");
  EXPECT_EQ(formatSummary({4, 10, 10, 0.5, 0.0, 125, 2000}),
            "done: step 10/10 (resumed at step 4), loss 0.500000, padding 0.0% of tokens, "
            "2m05s, 2.00k samples/s");
  EXPECT_EQ(formatSummary({8, 8, 8, 0, 0.25, 0, 0}),
            "done: step 8/8 (resumed at step 8), nothing to train");
}

/// What a display in `mode` writes for steps 1..3 of 3 with a note after step 2.
std::string displayOutput(ProgressMode mode) {
  testing::ScratchDir dir;
  std::string path = dir.file("out.txt");
  std::FILE *out = std::fopen(path.c_str(), "w");
  ProgressDisplay display(mode, 0, 3, out);
  display.step(1, 1, 0.75f, 0.5f, 8);
  display.step(2, 1, 0.25f, 0.5f, 8);
  display.note("saved somewhere");
  display.step(3, 2, 0.5f, 0.25f, 4);
  display.finish(0.5);
  std::fclose(out);
  return testing::readText(path);
}

TEST(Progress, ModesWriteWhatTheyShould) {
  std::string lines = displayOutput(ProgressMode::Lines);
  EXPECT_EQ(lines.rfind("step 1/3  loss 0.750000  lr 5.00e-01  epoch 1  ", 0), 0u) << lines;
  EXPECT_NE(lines.find("\nstep 2/3  loss 0.250000  "), std::string::npos) << lines;
  EXPECT_NE(lines.find("\nsaved somewhere\nstep 3/3  loss 0.500000  lr 2.50e-01  epoch 2  "),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("\ndone: step 3/3, loss 0.500000, padding 50.0% of tokens, "),
            std::string::npos)
      << lines;
  EXPECT_EQ(lines.find('\r'), std::string::npos);

  std::string quiet = displayOutput(ProgressMode::Quiet);
  EXPECT_EQ(quiet.rfind("done: step 3/3, loss 0.500000, padding 50.0% of tokens, ", 0), 0u)
      << quiet;
  EXPECT_EQ(std::count(quiet.begin(), quiet.end(), '\n'), 1) << quiet;

  // The terminal line is redrawn in place: the note clears it, prints, and redraws; the last
  // step always shows (mean of the recent losses 0.75, 0.25, 0.5); the summary follows.
  std::string terminal = displayOutput(ProgressMode::Terminal);
  EXPECT_EQ(terminal.rfind("\rstep 1/3 [######..............]  33%  epoch 1  loss 0.7500", 0), 0u)
      << terminal;
  EXPECT_NE(terminal.find("\r\033[Ksaved somewhere\n\rstep "), std::string::npos) << terminal;
  EXPECT_NE(terminal.find("\rstep 3/3 [####################] 100%  epoch 2  loss 0.5000  "),
            std::string::npos)
      << terminal;
  EXPECT_NE(terminal.find("\033[K\ndone: step 3/3, "), std::string::npos) << terminal;
}

// A run that stops with an error ends the status line, drawn at its last step, so that the
// error, on stderr, starts a line of its own.
TEST(Progress, ADisplayLeftUnfinishedEndsItsStatusLine) {
  testing::ScratchDir dir;
  std::string path = dir.file("out.txt");
  std::FILE *out = std::fopen(path.c_str(), "w");
  {
    ProgressDisplay display(ProgressMode::Terminal, 0, 3, out);
    display.step(1, 1, 0.75f, 0.5f, 8);
    display.step(2, 1, 0.25f, 0.5f, 8); // within the redraw interval: not shown yet
  }
  std::fclose(out);
  std::string terminal = testing::readText(path);
  EXPECT_NE(terminal.find("\rstep 2/3 "), std::string::npos) << terminal;
  EXPECT_EQ(terminal.back(), '\n') << terminal;
}

} // namespace
} // namespace bertc
