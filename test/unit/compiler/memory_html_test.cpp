//===- memory_html_test.cpp - memory.html from a hand-made picture --------===//
//
// Renders small pictures whose geometry is worked out by hand below and finds the parts of
// the page by their ids and data attributes (never by comparing whole documents): rects,
// the peak marker, the category table, the peak-tensors table, escaping and the empty page.
//
//===----------------------------------------------------------------------===//

#include "bertc/Driver/MemoryHtml.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using bertc::ArenaBlock;
using bertc::MemoryPicture;
using bertc::renderMemoryHtml;

size_t countOf(const std::string &text, const std::string &needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

/// The whole start tag that contains `marker`, e.g. `<rect ... data-name="t1" ...>`.
std::string tagWith(const std::string &page, const std::string &marker) {
  size_t at = page.find(marker);
  if (at == std::string::npos)
    return "";
  size_t open = page.rfind('<', at);
  return page.substr(open, page.find('>', at) + 1 - open);
}

/// The value of ` name="..."` in a start tag, or "<missing>".
std::string attribute(const std::string &tag, const std::string &name) {
  std::string key = " " + name + "=\"";
  size_t at = tag.find(key);
  if (at == std::string::npos)
    return "<missing>";
  at += key.size();
  return tag.substr(at, tag.find('"', at) - at);
}

/// From the element that carries `marker` up to the first `close` after it.
std::string elementWith(const std::string &page, const std::string &marker,
                        const std::string &close) {
  size_t at = page.find(marker);
  if (at == std::string::npos)
    return "";
  return page.substr(at, page.find(close, at) - at);
}

ArenaBlock block(std::string name, std::string category, int64_t offset, int64_t bytes,
                 int64_t firstStep, int64_t lastStep) {
  ArenaBlock b;
  b.name = std::move(name);
  b.category = std::move(category);
  b.shape = "[2, 4]";
  b.dtype = "f32";
  b.producer = b.category == "parameters" ? "" : "bert.linear";
  b.origin = "model.toml:3:1";
  b.offset = offset;
  b.bytes = bytes;
  b.firstStep = firstStep;
  b.lastStep = lastStep;
  return b;
}

/// A 1000-byte arena over ten steps. The plot's viewBox is 10 steps wide and 100000 units
/// high, so a step is one unit of x and a byte is 100 units of y, 0 bytes at the bottom:
///   y = 100000 - 100 * (offset + bytes), height = 100 * bytes.
/// Live bytes per step: 400 at 0-1, 650 at 2-3, 1000 at 4 (the peak: embed, t1, t2),
/// 650 at 5, 850 at 6, 950 at 7-8, 500 at 9.
MemoryPicture smallPicture() {
  MemoryPicture p;
  p.title = "examples/tiny/model.toml";
  p.budgetBytes = 2000;
  p.arenaBytes = 1000;
  p.lowerBoundBytes = 1000;
  p.peakBytes = 1500;
  p.peakStep = 4;
  p.categories = {{"parameters", 400}, {"gradients", 400}, {"activations", 600},
                  {"workspace", 100},  {"reserve", 0},     {"mystery", 0}};
  for (int step = 0; step < 10; ++step)
    p.steps.push_back("op" + std::to_string(step));
  p.blocks = {
      block("embed.weight", "parameters", 0, 400, 0, 9), // x 0 w 10, y 60000 h 40000
      block("t1", "activations", 400, 250, 2, 5),        // x 2 w 4,  y 35000 h 25000
      block("t2", "temporaries", 650, 350, 4, 4),        // x 4 w 1,  y 0     h 35000
      block("t3", "activations", 400, 450, 6, 8),        // x 6 w 3,  y 15000 h 45000
      block("t4", "mystery", 900, 100, 7, 9),            // x 7 w 3,  y 0     h 10000
  };
  return p;
}

TEST(MemoryHtml, OneRectPerBlockWithHandComputedGeometry) {
  std::string page = renderMemoryHtml(smallPicture());
  EXPECT_EQ(countOf(page, "<rect id=\"b"), 5u);
  EXPECT_NE(page.find("viewBox=\"0 0 10 100000\""), std::string::npos);
  struct Expected {
    const char *name, *x, *y, *width, *height, *fill;
  };
  const Expected expected[] = {
      {"embed.weight", "0", "60000", "10", "40000", "#4e79a7"}, // full-width band
      {"t1", "2", "35000", "4", "25000", "#59a14f"},
      {"t2", "4", "0", "1", "35000", "#8cd17d"},
      {"t3", "6", "15000", "3", "45000", "#59a14f"},
      {"t4", "7", "0", "3", "10000", "#9c755f"}, // an unknown category: the fallback colour
  };
  for (const Expected &e : expected) {
    std::string tag = tagWith(page, std::string("class=\"b\" data-name=\"") + e.name + "\"");
    ASSERT_FALSE(tag.empty()) << e.name;
    EXPECT_EQ(attribute(tag, "x"), e.x) << e.name;
    EXPECT_EQ(attribute(tag, "y"), e.y) << e.name;
    EXPECT_EQ(attribute(tag, "width"), e.width) << e.name;
    EXPECT_EQ(attribute(tag, "height"), e.height) << e.name;
    EXPECT_EQ(attribute(tag, "fill"), e.fill) << e.name;
  }
}

TEST(MemoryHtml, TooltipCarriesEverythingAboutTheBlock) {
  std::string page = renderMemoryHtml(smallPicture());
  std::string t1 = elementWith(page, "data-name=\"t1\"", "</rect>");
  for (const char *part :
       {"<title>t1\n", "activations", "[2, 4]", "f32", "250 B", "offsets [400, 650)",
        "steps 2&#8211;5 (op2 &#8594; op5)", "producer bert.linear", "origin model.toml:3:1"})
    EXPECT_NE(t1.find(part), std::string::npos) << part;
  // A parameter has no producer, and says nothing rather than an empty line.
  EXPECT_EQ(elementWith(page, "data-name=\"embed.weight\"", "</rect>").find("producer"),
            std::string::npos);
}

TEST(MemoryHtml, EdgesRoundSoNeighboursTouch) {
  MemoryPicture p;
  p.arenaBytes = 3;
  p.steps = {"a"};
  // Byte 1 sits at 100000 - round(100000 / 3) = 66667, byte 2 at 100000 - 66667 = 33333.
  p.blocks = {block("low", "activations", 0, 1, 0, 0), block("high", "activations", 1, 1, 0, 0)};
  std::string page = renderMemoryHtml(p);
  std::string low = tagWith(page, "data-name=\"low\""), high = tagWith(page, "data-name=\"high\"");
  EXPECT_EQ(attribute(low, "y"), "66667");
  EXPECT_EQ(attribute(low, "height"), "33333");
  EXPECT_EQ(attribute(high, "y"), "33333");
  EXPECT_EQ(attribute(high, "height"), "33334");
}

TEST(MemoryHtml, PeakMarkerSitsInTheMiddleOfThePeakStep) {
  std::string page = renderMemoryHtml(smallPicture());
  std::string marker = tagWith(page, "<line class=\"peak\"");
  EXPECT_EQ(attribute(marker, "x1"), "4.5");
  EXPECT_EQ(attribute(marker, "x2"), "4.5");
  EXPECT_EQ(attribute(marker, "y1"), "0");
  EXPECT_EQ(attribute(marker, "y2"), "100000");
  EXPECT_NE(page.find("peak &#183; step 4 &#183; op4"), std::string::npos);
}

TEST(MemoryHtml, PeakTableListsOnlyLiveBlocksLargestFirst) {
  std::string table =
      elementWith(renderMemoryHtml(smallPicture()), "id=\"peak-tensors\"", "</table>");
  ASSERT_FALSE(table.empty());
  // Live at step 4: embed.weight (400), t1 (250), t2 (350); the larger t3 (450) is not.
  size_t embed = table.find("data-name=\"embed.weight\""), t2 = table.find("data-name=\"t2\"");
  size_t t1 = table.find("data-name=\"t1\"");
  ASSERT_NE(embed, std::string::npos);
  ASSERT_NE(t2, std::string::npos);
  ASSERT_NE(t1, std::string::npos);
  EXPECT_LT(embed, t2);
  EXPECT_LT(t2, t1);
  EXPECT_EQ(table.find("data-name=\"t3\""), std::string::npos);
  EXPECT_EQ(table.find("data-name=\"t4\""), std::string::npos);
  EXPECT_EQ(countOf(table, "<tr data-block="), 3u);
  // Each row points at its rect, so the table can highlight it.
  EXPECT_NE(table.find("<tr data-block=\"b2\" data-name=\"t2\""), std::string::npos);
}

TEST(MemoryHtml, PeakTableKeepsTheTwentyLargest) {
  MemoryPicture p;
  p.arenaBytes = 30 * 100;
  p.steps = {"only"};
  for (int i = 0; i < 30; ++i) // t0 is the smallest, t29 the largest
    p.blocks.push_back(block("t" + std::to_string(i), "activations", i * 100, 10 + i, 0, 0));
  std::string table = elementWith(renderMemoryHtml(p), "id=\"peak-tensors\"", "</table>");
  EXPECT_EQ(countOf(table, "<tr data-block="), 20u);
  EXPECT_NE(table.find("data-name=\"t10\""), std::string::npos);
  EXPECT_EQ(table.find("data-name=\"t9\""), std::string::npos);
  EXPECT_LT(table.find("data-name=\"t29\""), table.find("data-name=\"t28\""));
}

TEST(MemoryHtml, CategoriesInOrderWithShareOfBudget) {
  std::string page = renderMemoryHtml(smallPicture());
  std::string table = elementWith(page, "id=\"category-table\"", "</table>");
  auto row = [&](const std::string &name) {
    return elementWith(table, "<tr data-category=\"" + name + "\"", "</tr>");
  };
  EXPECT_NE(row("parameters").find("20.0%"), std::string::npos);
  EXPECT_NE(row("gradients").find("20.0%"), std::string::npos);
  EXPECT_NE(row("activations").find("30.0%"), std::string::npos);
  EXPECT_NE(row("workspace").find("5.0%"), std::string::npos);
  EXPECT_NE(row("reserve").find("0.0%"), std::string::npos);
  EXPECT_NE(row("activations").find("#59a14f"), std::string::npos);
  EXPECT_NE(row("mystery").find("#9c755f"), std::string::npos);
  EXPECT_LT(table.find("\"parameters\""), table.find("\"gradients\""));
  EXPECT_LT(table.find("\"gradients\""), table.find("\"activations\""));
  // 1500 of 2000 used: the bar leaves a quarter unused, and the total row says 75%.
  EXPECT_NE(page.find("width:30.000%;background:#59a14f"), std::string::npos);
  EXPECT_NE(page.find("class=\"free\" style=\"width:25.000%\""), std::string::npos);
  EXPECT_NE(elementWith(table, "<tr class=\"total\"", "</tr>").find("75.0%"), std::string::npos);
}

TEST(MemoryHtml, HeaderSizesAreBinaryWithExactBytesOnHover) {
  MemoryPicture p = smallPicture();
  p.budgetBytes = int64_t(6) << 30;
  p.peakBytes = int64_t(3) << 30;
  p.arenaBytes = 1536;
  p.lowerBoundBytes = 1023;
  std::string page = renderMemoryHtml(p);
  std::string header = elementWith(page, "<header>", "</header>");
  EXPECT_NE(header.find("<span title=\"6,442,450,944 bytes\">6.00 GiB</span>"), std::string::npos);
  EXPECT_NE(header.find("3.00 GiB</span></div><div class=\"d\">50.0% of budget"),
            std::string::npos);
  EXPECT_NE(header.find("<span title=\"1,536 bytes\">1.50 KiB</span>"), std::string::npos);
  EXPECT_NE(header.find(">1023 B</span>"), std::string::npos);
  EXPECT_NE(header.find("examples/tiny/model.toml"), std::string::npos);
}

TEST(MemoryHtml, AHostCardOnlyWhenTheOptimizerIsOnTheHost) {
  MemoryPicture p = smallPicture();
  std::string onDevice = elementWith(renderMemoryHtml(p), "<header>", "</header>");
  EXPECT_EQ(onDevice.find(">Host<"), std::string::npos);
  p.hostBytes = int64_t(6) << 30;       // 6 GiB in host memory,
  p.hostPinnedBytes = int64_t(2) << 30; // 2 GiB of it page-locked
  std::string header = elementWith(renderMemoryHtml(p), "<header>", "</header>");
  EXPECT_NE(header.find(">Host</div><div class=\"v\"><span title=\"6,442,450,944 bytes\">6.00 "
                        "GiB</span></div><div class=\"d\">master weights and AdamW state, "
                        "gradient and parameter copies (2.00 GiB of them pinned;"),
            std::string::npos)
      << header;
}

TEST(MemoryHtml, OverBudgetIsSaidAndMarked) {
  MemoryPicture p = smallPicture();
  p.budgetBytes = 1000; // categories total 1500
  std::string page = renderMemoryHtml(p);
  EXPECT_NE(page.find("over budget by 500 B"), std::string::npos);
  // The bar is scaled to the 1500-byte total; the budget mark sits at two thirds.
  EXPECT_NE(page.find("class=\"budget\" style=\"left:66.667%\""), std::string::npos);
}

TEST(MemoryHtml, EveryInputStringIsEscaped) {
  const std::string evil = "<script>alert(\"x&y\")</script>'";
  const std::string escaped = "&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;&#39;";
  MemoryPicture p = smallPicture();
  p.title = evil;
  p.steps[4] = evil;
  p.categories.push_back({evil, 1});
  ArenaBlock b = block(evil, evil, 0, 100, 4, 4);
  b.shape = b.dtype = b.producer = b.origin = evil;
  p.blocks.push_back(b);
  std::string page = renderMemoryHtml(p);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_EQ(page.find("alert(\""), std::string::npos);
  EXPECT_EQ(page.find("</script>'"), std::string::npos);
  EXPECT_EQ(countOf(page, "<script"), 1u); // the page's own script, nothing else
  EXPECT_GE(countOf(page, escaped), 10u);
  EXPECT_NE(page.find("data-name=\"" + escaped + "\""), std::string::npos);
}

TEST(MemoryHtml, PageIsSelfContained) {
  std::string page = renderMemoryHtml(smallPicture());
  for (const char *reference : {"http", "src=", "<link", "@import", "url("})
    EXPECT_EQ(page.find(reference), std::string::npos) << reference;
  EXPECT_NE(page.find("<style>"), std::string::npos);
  EXPECT_EQ(page.rfind("</html>\n"), page.size() - 8);
}

TEST(MemoryHtml, StepTimeRowsInTheirOrderWithTheirShare) {
  MemoryPicture p = smallPicture();
  p.stepSeconds = 0.02;
  p.device = "sm_80";
  // 0.015 s of 0.02 is 75.0%, 0.004 s 20.0%, 0.001 s 5.0%.
  p.stepTime = {{"bert.linear", 74, 74, 696.2e9, 0.015},
                {"bert.adamw", 1, 0, 1.4e9, 0.004},
                {"gradient <zeroing>", 1, 1, 0, 0.001}};
  std::string page = renderMemoryHtml(p);
  std::string table = elementWith(page, "id=\"step-time\"", "</table>");
  ASSERT_FALSE(table.empty());
  EXPECT_EQ(countOf(table, "<tr data-op="), 3u);
  size_t linear = table.find("data-op=\"bert.linear\""),
         adamw = table.find("data-op=\"bert.adamw\"");
  size_t zeroing = table.find("data-op=\"gradient &lt;zeroing&gt;\"");
  ASSERT_NE(zeroing, std::string::npos);
  EXPECT_LT(linear, adamw);
  EXPECT_LT(adamw, zeroing);
  std::string row = elementWith(table, "data-op=\"bert.linear\"", "</tr>");
  EXPECT_NE(row.find(">0.015000<"), std::string::npos) << row;
  EXPECT_NE(row.find(">75.0%<"), std::string::npos) << row;
  EXPECT_NE(row.find("width:75.000%"), std::string::npos) << row;
  EXPECT_NE(row.find(">74<"), std::string::npos) << row;
  EXPECT_NE(row.find(">696.20<"), std::string::npos) << row;
  EXPECT_NE(elementWith(table, "data-op=\"bert.adamw\"", "</tr>").find(">20.0%<"),
            std::string::npos);
  EXPECT_NE(page.find("Estimated for sm_80: about 0.0200 s"), std::string::npos);
  // Without an estimate there is no section.
  EXPECT_EQ(renderMemoryHtml(smallPicture()).find("id=\"step-time\""), std::string::npos);
}

TEST(MemoryHtml, EmptyPictureStillRenders) {
  std::string page = renderMemoryHtml(MemoryPicture{});
  EXPECT_EQ(page.find("<!DOCTYPE html>"), 0u);
  EXPECT_NE(page.find("</html>"), std::string::npos);
  EXPECT_EQ(countOf(page, "<rect id=\"b"), 0u);
  EXPECT_NE(page.find("No tensors in the arena"), std::string::npos);
  EXPECT_NE(page.find("viewBox=\"0 0 1 100000\""), std::string::npos);
  for (const char *bad : {"nan", "inf%", ">inf", "-inf"})
    EXPECT_EQ(page.find(bad), std::string::npos) << bad;
  EXPECT_EQ(countOf(elementWith(page, "id=\"peak-tensors\"", "</table>"), "<tr data-block"), 0u);
}

TEST(MemoryHtml, BertLargeSizedPictureStaysCompact) {
  MemoryPicture p;
  p.arenaBytes = int64_t(5000) << 20;
  p.steps.assign(3000, "bert.linear");
  for (int i = 0; i < 5000; ++i)
    p.blocks.push_back(
        block("bert.encoder.layer." + std::to_string(i % 24) + ".t" + std::to_string(i),
              "activations", int64_t(i) << 20, 1 << 20, i % 3000, i % 3000 + 5));
  std::string page = renderMemoryHtml(p);
  EXPECT_EQ(countOf(page, "<rect id=\"b"), 5000u);
  EXPECT_LT(page.size(), 5000u * 600); // one rect and its tooltip per block, nothing per step
}

} // namespace
