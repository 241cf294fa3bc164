#!/usr/bin/python3
"""Draws docs/results/fd-vs-ddp.svg from the full-duplex table in docs/benchmarks.md.

Each row of that table with a PyTorch DDP median becomes a group of three bars: the
phase-separated optimum (dynacomm), the full-duplex plan (dynacomm-fd) and DDP, as
iteration time relative to DDP's in the same job (lower is faster). The chart holds
nothing the table does not.

    /usr/bin/python3 scripts/fd_vs_ddp_chart.py [docs/benchmarks.md] [out.svg]
"""
import re
import sys
from pathlib import Path

SECTION = "## Full duplex against PyTorch DDP"
SERIES = [("dynacomm", 1, "#9e9e9e"), ("dynacomm-fd", 2, "#1f77b4"), ("PyTorch DDP", 5, "#ff7f0e")]


def median(cell):
    m = re.match(r"\s*([0-9.]+)", cell)
    return float(m.group(1)) if m else None


def rows(markdown):
    text = markdown.split(SECTION, 1)[1].split("\n## ", 1)[0]
    out = []
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith("| model") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        ddp = median(cells[5])
        if ddp is None:
            continue
        label = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cells[0])
        label = re.sub(r"\s*\(\d\)$", "", label)
        label = re.sub(r"^(\w+), ([\d/]+), (\d+)$", r"\1 \2 Mbit/s, \3 workers", label)
        out.append((label, [median(cells[i]) / ddp for _, i, _ in SERIES]))
    return out


def svg(data):
    left, top, bar, gap, width = 230, 40, 9, 10, 420
    height = top + len(data) * (3 * bar + gap) + 50
    scale = width / 2.0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 40}" '
             f'height="{height}" font-family="sans-serif" font-size="11">',
             f'<text x="{left}" y="16" font-size="13">Time per iteration relative to PyTorch '
             'DDP in the same job (lower is faster)</text>']
    y = top
    for label, values in data:
        parts.append(f'<text x="{left - 6}" y="{y + 1.5 * bar + 4}" text-anchor="end">{label}</text>')
        for (name, _, colour), v in zip(SERIES, values):
            w = min(v, 2.0) * scale
            parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar - 1}" '
                         f'fill="{colour}"><title>{name}: {v:.2f}x DDP</title></rect>')
            parts.append(f'<text x="{left + w + 3:.1f}" y="{y + bar - 1}" font-size="9">{v:.2f}</text>')
            y += bar
        y += gap
    for tick in (0, 0.5, 1.0, 1.5, 2.0):
        x = left + tick * scale
        dash = "" if tick == 1.0 else ' stroke-dasharray="2,3"'
        parts.append(f'<line x1="{x}" y1="{top - 4}" x2="{x}" y2="{y}" stroke="#555"{dash}/>')
        parts.append(f'<text x="{x}" y="{y + 14}" text-anchor="middle">{tick:.1f}</text>')
    lx = left
    for name, _, colour in SERIES:
        parts.append(f'<rect x="{lx}" y="{y + 24}" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{lx + 14}" y="{y + 33}">{name}</text>')
        lx += 120
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main():
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/benchmarks.md")
    dst = Path(sys.argv[2] if len(sys.argv) > 2 else "docs/results/fd-vs-ddp.svg")
    data = rows(src.read_text())
    if not data:
        sys.exit(f"fd_vs_ddp_chart: no rows with a DDP median under '{SECTION}' in {src}")
    dst.write_text(svg(data))
    print(f"fd_vs_ddp_chart: {len(data)} rows -> {dst}")


if __name__ == "__main__":
    main()
