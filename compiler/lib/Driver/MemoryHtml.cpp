//===- MemoryHtml.cpp - the memory plan as a picture ----------------------===//
//
// Renders a MemoryPicture as one self-contained page: sizes up top, the budget by category
// (stacked bar and table), the arena timeline as inline SVG with a <title> tooltip per block,
// the largest tensors live at the peak, and the estimated step time by op. The short script only
// mirrors hover details into a panel and highlights blocks from the table; the page reads fully
// without it.
//
//===----------------------------------------------------------------------===//

#include "bertc/Driver/MemoryHtml.h"

#include "HtmlText.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace bertc {
namespace {
using namespace html;

/// The timeline frame in the outer SVG's user units (about pixels at full width).
constexpr double kFrameWidth = 1200, kFrameHeight = 556;
constexpr double kPlotLeft = 84, kPlotTop = 28, kPlotWidth = 1096, kPlotHeight = 480;
/// Byte offsets are scaled to 0..kYUnits inside the plot, so coordinates stay small integers.
constexpr int64_t kYUnits = 100000;
constexpr size_t kTopTensors = 20;

std::string categoryColour(std::string_view category) {
  static const std::pair<std::string_view, const char *> colours[] = {
      {"parameters", "#4e79a7"},      {"master_weights", "#a0cbe8"}, {"gradients", "#f28e2b"},
      {"optimizer_state", "#e15759"}, {"activations", "#59a14f"},    {"temporaries", "#8cd17d"},
      {"workspace", "#b07aa1"},       {"reserve", "#bab0ac"}};
  for (const auto &[name, colour] : colours)
    if (name == category)
      return colour;
  return "#9c755f";
}

std::string swatch(std::string_view category) {
  return "<span class=\"sw\" style=\"background:" + categoryColour(category) + "\"></span>";
}

/// The op at a schedule position, or nothing when the position has no name.
std::string_view stepName(const MemoryPicture &p, int64_t step) {
  return step >= 0 && step < int64_t(p.steps.size()) ? std::string_view(p.steps[step]) : "";
}

bool liveAt(const ArenaBlock &block, int64_t step) {
  return block.firstStep <= step && step <= block.lastStep;
}

void renderHeader(const MemoryPicture &p, std::string &out) {
  auto card = [&](const char *key, int64_t bytes, const std::string &detail) {
    put(out, "<div class=\"card\"><div class=\"k\">", key, "</div><div class=\"v\">",
        sizeSpan(bytes), "</div><div class=\"d\">", detail, "</div></div>");
  };
  std::string fit = "<span class=\"ok\">fits</span>";
  if (p.budgetBytes <= 0)
    fit = "no budget given";
  else if (p.peakBytes > p.budgetBytes)
    fit = "<span class=\"over\">over budget by " + binaryBytes(p.peakBytes - p.budgetBytes) +
          "</span>";
  std::string packing = p.lowerBoundBytes > 0
                            ? "arena is " +
                                  percentOf(p.arenaBytes - p.lowerBoundBytes, p.lowerBoundBytes) +
                                  " above it"
                            : "nothing live";
  put(out, "<header><h1>Memory plan <small>", escape(p.title), "</small></h1>",
      "<p class=\"note\">", escape(p.choices), " &#183; ", std::to_string(p.steps.size()),
      " ops in the step, ", std::to_string(p.blocks.size()),
      " tensors in the arena</p><div class=\"cards\">");
  card("Budget", p.budgetBytes, "--vram");
  card("Peak", p.peakBytes, percentOf(p.peakBytes, p.budgetBytes) + " of budget &#183; " + fit);
  card("Arena", p.arenaBytes, "one allocation holds every tensor");
  card("Lower bound", p.lowerBoundBytes, "max bytes live at once; " + packing);
  if (p.hostBytes > 0)
    card("Host", p.hostBytes,
         "master weights and AdamW state, gradient and parameter copies (" +
             (p.hostPinnedBytes > 0 ? binaryBytes(p.hostPinnedBytes) + " of them pinned; " : "") +
             "AdamW runs on the host)");
  if (p.hostCheckpointBytes > 0)
    card("Host checkpoints", p.hostCheckpointBytes,
         std::to_string(p.offloadedCheckpoints) +
             " tensors the backward reads, copied down in the forward and back up for the "
             "backward");
  if (p.hostTableBytes > 0)
    card("Host embeddings", p.hostTableBytes,
         std::to_string(p.hostTables) +
             " frozen table(s) the device gathers the batch's rows from, in place");
  if (p.hostFrozenMasterBytes > 0)
    card("Host masters", p.hostFrozenMasterBytes,
         "frozen parameters' fp32 values, for the checkpoint (the device holds 16-bit copies)");
  put(out, "</div></header>\n");
}

/// The budget as a stacked bar (scaled to the larger of budget and total, with the budget
/// marked when exceeded) and a table with each category's share of the budget.
void renderCategories(const MemoryPicture &p, std::string &out) {
  int64_t total = 0;
  for (const auto &category : p.categories)
    total += std::max<int64_t>(category.second, 0);
  int64_t scale = std::max(p.budgetBytes, total);
  auto width = [&](int64_t bytes) { return fixed(100.0 * double(bytes) / double(scale), 3); };
  put(out, "<section id=\"categories\"><h2>Where the budget goes</h2><div class=\"stack\">");
  for (const auto &[name, bytes] : p.categories) {
    if (bytes <= 0)
      continue;
    put(out, "<div style=\"width:", width(bytes), "%;background:", categoryColour(name),
        "\" title=\"", escape(name), ": ", binaryBytes(bytes), " (", groupedDigits(bytes),
        " bytes), ", percentOf(bytes, p.budgetBytes), " of budget\">", escape(name), "</div>");
  }
  if (p.budgetBytes > total)
    put(out, "<div class=\"free\" style=\"width:", width(p.budgetBytes - total),
        "%\" title=\"unused: ", binaryBytes(p.budgetBytes - total), "\">unused</div>");
  if (p.budgetBytes > 0 && total > p.budgetBytes)
    put(out, "<div class=\"budget\" style=\"left:", width(p.budgetBytes),
        "%\" title=\"budget\"></div>");
  put(out, "</div><table id=\"category-table\"><tr><th>Category</th><th>Bytes</th>"
           "<th>% of budget</th></tr>");
  for (const auto &[name, bytes] : p.categories)
    put(out, "<tr data-category=\"", escape(name), "\"><td>", swatch(name), escape(name),
        "</td><td class=\"n\">", sizeSpan(bytes), "</td><td class=\"n\">",
        percentOf(bytes, p.budgetBytes), "</td></tr>");
  put(out, "<tr class=\"total\"><td>total</td><td class=\"n\">", sizeSpan(total),
      "</td><td class=\"n\">", percentOf(total, p.budgetBytes), "</td></tr></table></section>\n");
}

/// Where the timeline puts steps and bytes.
struct TimelineScale {
  int64_t steps;    ///< columns: schedule positions, at least one
  int64_t topBytes; ///< the byte offset at the top edge, at least one

  /// Inner-plot y of a byte offset: 0 bytes at the bottom (kYUnits), topBytes at 0.
  int64_t y(int64_t offset) const {
    return kYUnits - std::llround(double(offset) * double(kYUnits) / double(topBytes));
  }
  double pixelX(double step) const { return kPlotLeft + kPlotWidth * step / double(steps); }
  double pixelY(int64_t offset) const {
    return kPlotTop + kPlotHeight * (1.0 - double(offset) / double(topBytes));
  }
};

std::string blockTooltip(const MemoryPicture &p, const ArenaBlock &b) {
  std::string text = escape(b.name) + "\n" + escape(b.category) + " &#183; " + escape(b.shape) +
                     " &#183; " + escape(b.dtype) + "\n" + binaryBytes(b.bytes) + " (" +
                     groupedDigits(b.bytes) + " bytes)\n" + "offsets [" + groupedDigits(b.offset) +
                     ", " + groupedDigits(b.offset + b.bytes) + ")\nsteps " +
                     std::to_string(b.firstStep) + "&#8211;" + std::to_string(b.lastStep);
  std::string_view first = stepName(p, b.firstStep), last = stepName(p, b.lastStep);
  if (!first.empty() || !last.empty())
    text += " (" + escape(first) + " &#8594; " + escape(last) + ")";
  if (!b.producer.empty())
    text += "\nproducer " + escape(b.producer);
  if (!b.origin.empty())
    text += "\norigin " + escape(b.origin);
  return text;
}

/// The smallest of 1, 2, 5, 10, 20, 50, ... that cuts `steps` into at most ten ticks.
int64_t stepTickInterval(int64_t steps) {
  for (int64_t decade = 1;; decade *= 10)
    for (int64_t multiple : {1, 2, 5})
      if (decade * multiple * 10 >= steps)
        return decade * multiple;
}

/// Ticks and grid in the outer SVG's pixel units: x every 1, 2 or 5 * 10^k steps, y every
/// power of two bytes that cuts the arena into at most six bands.
void renderAxes(const TimelineScale &scale, std::string &out) {
  int64_t stepTick = stepTickInterval(scale.steps);
  double bottom = kPlotTop + kPlotHeight;
  for (int64_t step = 0; step <= scale.steps; step += stepTick) {
    std::string x = coord(scale.pixelX(double(step)));
    put(out, "<line class=\"tick\" x1=\"", x, "\" x2=\"", x, "\" y1=\"", coord(bottom), "\" y2=\"",
        coord(bottom + 5), "\"/><text x=\"", x, "\" y=\"", coord(bottom + 19),
        "\" text-anchor=\"middle\">", std::to_string(step), "</text>");
  }
  int64_t byteTick = 1;
  while (byteTick * 6 < scale.topBytes)
    byteTick *= 2;
  for (int64_t offset = 0; offset <= scale.topBytes; offset += byteTick) {
    std::string y = coord(scale.pixelY(offset));
    put(out, "<line class=\"grid\" x1=\"", coord(kPlotLeft - 5), "\" x2=\"",
        coord(kPlotLeft + kPlotWidth), "\" y1=\"", y, "\" y2=\"", y, "\"/><text x=\"",
        coord(kPlotLeft - 8), "\" y=\"", coord(scale.pixelY(offset) + 4), "\" text-anchor=\"end\">",
        binaryBytes(offset), "</text>");
  }
  put(out, "<text x=\"", coord(kPlotLeft + kPlotWidth / 2), "\" y=\"", coord(kFrameHeight - 6),
      "\" text-anchor=\"middle\">schedule position (op index)</text>");
}

/// One <rect> per block in an inner SVG whose viewBox is (steps x kYUnits), stretched to the
/// plot: x and width count steps, y and height are scaled offsets. Top and bottom edges round
/// independently, so blocks that touch in bytes touch on screen. The peak marker runs down
/// the middle of its step.
void renderBlocks(const MemoryPicture &p, const TimelineScale &scale, std::string &out) {
  put(out, "<svg x=\"", coord(kPlotLeft), "\" y=\"", coord(kPlotTop), "\" width=\"",
      coord(kPlotWidth), "\" height=\"", coord(kPlotHeight), "\" viewBox=\"0 0 ",
      std::to_string(scale.steps), " ", std::to_string(kYUnits),
      "\" preserveAspectRatio=\"none\">");
  for (size_t i = 0; i < p.blocks.size(); ++i) {
    const ArenaBlock &b = p.blocks[i];
    int64_t top = scale.y(b.offset + b.bytes);
    put(out, "<rect id=\"b", std::to_string(i), "\" class=\"b\" data-name=\"", escape(b.name),
        "\" x=\"", std::to_string(b.firstStep), "\" y=\"", std::to_string(top), "\" width=\"",
        std::to_string(std::max<int64_t>(b.lastStep + 1 - b.firstStep, 0)), "\" height=\"",
        std::to_string(std::max<int64_t>(scale.y(b.offset) - top, 0)), "\" fill=\"",
        categoryColour(b.category), "\"><title>", blockTooltip(p, b), "</title></rect>\n");
  }
  if (p.peakStep >= 0 && p.peakStep < scale.steps) {
    std::string x = std::to_string(p.peakStep) + ".5";
    put(out, "<line class=\"peak\" x1=\"", x, "\" x2=\"", x, "\" y1=\"0\" y2=\"",
        std::to_string(kYUnits), "\"/>");
  }
  put(out, "</svg>");
}

/// What sits on top and ignores the pointer: the frame, the peak label, the lower bound.
void renderOverlays(const MemoryPicture &p, const TimelineScale &scale, std::string &out) {
  put(out, "<rect class=\"frame\" x=\"", coord(kPlotLeft), "\" y=\"", coord(kPlotTop),
      "\" width=\"", coord(kPlotWidth), "\" height=\"", coord(kPlotHeight), "\"/>");
  if (p.blocks.empty())
    put(out, "<text x=\"", coord(kPlotLeft + kPlotWidth / 2), "\" y=\"",
        coord(kPlotTop + kPlotHeight / 2),
        "\" text-anchor=\"middle\">No tensors in the arena</text>");
  if (p.peakStep >= 0 && p.peakStep < scale.steps) {
    double x = scale.pixelX(double(p.peakStep) + 0.5);
    bool leftHalf = x < kPlotLeft + kPlotWidth / 2;
    std::string_view op = stepName(p, p.peakStep);
    put(out, "<text class=\"peak-label\" x=\"", coord(leftHalf ? x - 4 : x + 4), "\" y=\"",
        coord(kPlotTop - 8), "\" text-anchor=\"", leftHalf ? "start" : "end",
        "\">peak &#183; step ", std::to_string(p.peakStep), op.empty() ? "" : " &#183; ",
        escape(op), "</text>");
  }
  if (p.lowerBoundBytes > 0 && p.lowerBoundBytes <= scale.topBytes) {
    double y = scale.pixelY(p.lowerBoundBytes);
    put(out, "<line class=\"lb\" x1=\"", coord(kPlotLeft), "\" x2=\"",
        coord(kPlotLeft + kPlotWidth), "\" y1=\"", coord(y), "\" y2=\"", coord(y),
        "\"/><text class=\"lb-label\" x=\"", coord(kPlotLeft + kPlotWidth - 6), "\" y=\"",
        coord(y - 5), "\" text-anchor=\"end\">lower bound ", binaryBytes(p.lowerBoundBytes),
        "</text>");
  }
}

/// The arena timeline: x is the schedule position, y the byte offset (0 at the bottom).
/// The scale spans every schedule position and the arena, widened to any block that reaches
/// past either, so a malformed picture still draws without dividing by zero.
void renderTimeline(const MemoryPicture &p, std::string &out) {
  TimelineScale scale{std::max<int64_t>(int64_t(p.steps.size()), 1),
                      std::max<int64_t>(p.arenaBytes, 1)};
  std::vector<std::string> legend;
  for (const ArenaBlock &b : p.blocks) {
    scale.steps = std::max(scale.steps, b.lastStep + 1);
    scale.topBytes = std::max(scale.topBytes, b.offset + b.bytes);
    if (std::find(legend.begin(), legend.end(), b.category) == legend.end())
      legend.push_back(b.category);
  }
  put(out, "<section><h2>The arena over one train step</h2><p class=\"note\">x: schedule "
           "position; y: byte offset in the arena. Each rectangle is a tensor: the bytes it "
           "owns while it is live. Hover one for details.</p><div class=\"legend\">");
  for (const std::string &category : legend)
    put(out, "<span>", swatch(category), escape(category), "</span>");
  put(out, "</div><svg id=\"timeline\" viewBox=\"0 0 ", coord(kFrameWidth), " ",
      coord(kFrameHeight), "\" role=\"img\" aria-label=\"arena timeline\">");
  renderAxes(scale, out);
  renderBlocks(p, scale, out);
  renderOverlays(p, scale, out);
  put(out, "</svg><div id=\"info\">Hover a block: its name, shape, dtype, bytes, offsets, steps, "
           "producer and origin appear here.</div></section>\n");
}

/// The kTopTensors largest blocks live at peakStep, largest first (ties by name).
void renderPeakTensors(const MemoryPicture &p, std::string &out) {
  std::vector<size_t> live;
  int64_t liveBytes = 0;
  for (size_t i = 0; i < p.blocks.size(); ++i)
    if (liveAt(p.blocks[i], p.peakStep)) {
      live.push_back(i);
      liveBytes += p.blocks[i].bytes;
    }
  std::sort(live.begin(), live.end(), [&](size_t a, size_t b) {
    const ArenaBlock &x = p.blocks[a], &y = p.blocks[b];
    return x.bytes != y.bytes ? x.bytes > y.bytes : x.name < y.name;
  });
  std::string_view op = stepName(p, p.peakStep);
  put(out, "<section><h2>Largest tensors live at the peak</h2><p class=\"note\">Step ",
      std::to_string(p.peakStep), op.empty() ? "" : " (", escape(op), op.empty() ? "" : ")", ": ",
      std::to_string(live.size()), " tensors live, ", sizeSpan(liveBytes), " in all",
      live.size() > kTopTensors ? "; the " + std::to_string(kTopTensors) + " largest shown"
                                : std::string(),
      ".</p><table id=\"peak-tensors\"><tr><th>Tensor</th><th>Category</th><th>Shape</th>"
      "<th>Dtype</th><th>Bytes</th><th>Origin</th></tr>");
  live.resize(std::min(live.size(), kTopTensors));
  for (size_t i : live) {
    const ArenaBlock &b = p.blocks[i];
    put(out, "<tr data-block=\"b", std::to_string(i), "\" data-name=\"", escape(b.name),
        "\"><td class=\"name\">", escape(b.name), "</td><td>", swatch(b.category),
        escape(b.category), "</td><td>", escape(b.shape), "</td><td>", escape(b.dtype),
        "</td><td class=\"n\">", sizeSpan(b.bytes), "</td><td>", escape(b.origin), "</td></tr>");
  }
  put(out, "</table></section>\n");
}

/// Every op's share of the estimated step, longest first, with a bar for its share.
void renderStepTime(const MemoryPicture &p, std::string &out) {
  if (p.stepTime.empty())
    return;
  put(out, "<section><h2>Where the step time goes</h2><p class=\"note\">Estimated for ",
      escape(p.device), ": about ", fixed(p.stepSeconds, 4),
      " s an optimizer step. Each row is every run of an op in the step; the rows add up to "
      "the estimate.</p><table id=\"step-time\"><tr><th>Op</th><th>Seconds</th><th>Share</th>"
      "<th>Launches</th><th>GFLOP</th></tr>");
  for (const OpTime &op : p.stepTime) {
    double share = p.stepSeconds > 0 ? 100 * op.seconds / p.stepSeconds : 0;
    put(out, "<tr data-op=\"", escape(op.op), "\"><td class=\"name\">", escape(op.op),
        "</td><td class=\"n\">", fixed(op.seconds, 6), "</td><td class=\"n\">", fixed(share, 1),
        "%<div class=\"share\" style=\"width:", fixed(share, 3), "%\"></div></td><td class=\"n\">",
        std::to_string(std::llround(op.launches)), "</td><td class=\"n\">",
        fixed(op.flops / 1e9, 2), "</td></tr>");
  }
  put(out, "</table></section>\n");
}

constexpr const char *kStyle = R"css(
:root{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;background:#fafafa}
body{max-width:1240px;margin:0 auto;padding:16px 20px 40px}
h1{font-size:22px;margin:0}h1 small{font-weight:400;color:#666;font-size:15px;margin-left:8px}
h2{font-size:17px;margin:28px 0 6px}.note{color:#666;margin:2px 0 8px}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:180px}
.card .k{color:#666;font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card .v{font-size:22px;font-weight:600}.card .d{color:#555;font-size:12px}
.ok{color:#2e7d32;font-weight:600}.over{color:#c62828;font-weight:600}
.stack{position:relative;display:flex;height:30px;border:1px solid #bbb;border-radius:4px;
  overflow:hidden;background:#fff}
.stack>div{flex:none;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;color:#fff;
  font-size:12px;line-height:30px;text-indent:4px}
.stack>.free{background:repeating-linear-gradient(45deg,#f4f4f4 0 6px,#e6e6e6 6px 12px);color:#777}
.stack>.budget{position:absolute;top:0;bottom:0;width:3px;background:#c62828}
table{border-collapse:collapse;background:#fff;margin-top:10px;border:1px solid #ddd}
th,td{padding:4px 10px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
th{font-size:12px;color:#555;text-transform:uppercase}tr.total td{font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.name{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px;word-break:break-all}
tr[data-block]:hover{background:#fff6d5}
.share{height:4px;background:#5c6bc0;margin-top:2px}
.sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:6px;
  vertical-align:-1px}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:13px;margin-bottom:6px}
#timeline{display:block;width:100%;height:auto;background:#fff;border:1px solid #ddd;
  border-radius:6px}
#timeline text{font-size:12px;fill:#444}#timeline .grid{stroke:#e8e8e8}#timeline .tick{stroke:#999}
#timeline .frame{fill:none;stroke:#999;pointer-events:none}
rect.b{stroke:#fff;stroke-opacity:.7;stroke-width:.5px;vector-effect:non-scaling-stroke}
rect.b:hover,rect.b.hl{stroke:#000;stroke-opacity:1;stroke-width:1.5px}
#timeline.dim rect.b:not(.hl){opacity:.25}
.peak{stroke:#c62828;stroke-width:1.5px;vector-effect:non-scaling-stroke;pointer-events:none}
#timeline .peak-label{fill:#c62828;font-weight:600}
.lb{stroke:#222;stroke-dasharray:6 4;pointer-events:none}
#timeline .lb-label{fill:#222;paint-order:stroke;stroke:#fff;stroke-width:3px;pointer-events:none}
#info{white-space:pre-wrap;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px;
  background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 12px;margin-top:8px;
  min-height:7.5em}
)css";

constexpr const char *kScript = R"js(
(() => {
  const timeline = document.getElementById('timeline');
  const info = document.getElementById('info');
  const show = rect => { info.textContent = rect.querySelector('title').textContent; };
  timeline.addEventListener('mouseover', event => {
    const rect = event.target.closest('rect.b');
    if (rect) show(rect);
  });
  for (const row of document.querySelectorAll('tr[data-block]')) {
    const rect = document.getElementById(row.dataset.block);
    row.addEventListener('mouseenter', () => {
      rect.classList.add('hl'); timeline.classList.add('dim'); show(rect);
    });
    row.addEventListener('mouseleave', () => {
      rect.classList.remove('hl'); timeline.classList.remove('dim');
    });
  }
})();
)js";

} // namespace

std::string renderMemoryHtml(const MemoryPicture &picture) {
  std::string out;
  out.reserve(4096 + picture.blocks.size() * 400);
  put(out,
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>bertc memory &#8212; ",
      escape(picture.title), "</title><style>", kStyle, "</style></head><body>\n");
  renderHeader(picture, out);
  renderCategories(picture, out);
  renderTimeline(picture, out);
  renderPeakTensors(picture, out);
  renderStepTime(picture, out);
  put(out, "<script>", kScript, "</script></body></html>\n");
  return out;
}

} // namespace bertc
