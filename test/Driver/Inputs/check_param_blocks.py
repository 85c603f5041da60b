"""Checks memory.html's blocks of one bf16 parameter with 8-bit AdamW state (plan-report.test):
each slot drawn at its own bytes and in its category's colour."""
import re
import sys

page = open(sys.argv[1]).read()
name = sys.argv[2]
blocks = {}
for match in re.finditer(r'<rect [^>]*data-name="' + re.escape(name) + r'( \([^)]*\))?"[^>]*>',
                         page):
    rect = match.group(0)
    height = float(re.search(r'height="([0-9.]+)"', rect).group(1))
    fill = re.search(r'fill="(#[0-9a-f]+)"', rect).group(1)
    blocks[(match.group(1) or "").strip(" ()")] = (height, fill)
value, master, grad, m, v = (blocks[k][0] for k in ["", "master", "gradient", "Adam m", "Adam v"])
# bf16 value n * 2 B; fp32 master and gradient n * 4 B; 8-bit moments n B each.
for label, height, ratio in [("master", master, 2), ("gradient", grad, 2), ("Adam m", m, 0.5),
                             ("Adam v", v, 0.5)]:
    assert abs(height / value - ratio) < 0.02, (label, height, value)
colours = {"": "#4e79a7", "master": "#a0cbe8", "gradient": "#f28e2b", "Adam m": "#e15759",
           "Adam v": "#e15759", "Adam m absmax": "#e15759", "Adam v absmax": "#e15759"}
for key, colour in colours.items():
    assert blocks[key][1] == colour, (key, blocks[key])
print("ok")
