"""`simulate --plot FILE.svg`: per team, its accelerators in use over time (a step line) against its quota
(dashed), preemptions of its jobs marked - one small panel per team on a shared time axis. Plain SVG written
here (no plotting library): every figure comes from the summary, so the picture and the JSON agree."""

from __future__ import annotations

from html import escape
from typing import Any

WIDTH, PANEL, MARGIN_LEFT, MARGIN_RIGHT, GAP = 900, 90, 170, 20, 18
# More panels than this would be unreadable; the busiest teams are drawn and the rest named in a note.
MAX_PANELS = 24


def _quota(team: dict[str, Any]) -> int:
    return sum(amounts.get("accelerators", 0) for amounts in team["quota"].values())


def _preemptions(summary: dict[str, Any], team: str) -> list[int]:
    return [event["at"] for job in summary["jobs"] if job["team"] == team for event in job["events"]
            if event["event"] == "preempted"]


def svg(summary: dict[str, Any]) -> str:
    teams = sorted(summary["teams"], key=lambda t: -t["accelerator_hours"]["used"])
    shown, left_out = teams[:MAX_PANELS], teams[MAX_PANELS:]
    shown.sort(key=lambda t: [x["team"] for x in summary["teams"]].index(t["team"]))
    start, end = summary["window"]["start"], max(summary["window"]["end"], summary["window"]["start"] + 1)
    plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    height = 40 + len(shown) * (PANEL + GAP) + (20 if left_out else 0) + 30

    def x(at: int) -> float:
        return MARGIN_LEFT + plot_w * (min(max(at, start), end) - start) / (end - start)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" '
           'font-size="11">',
           '<text x="10" y="20" font-size="14">Accelerators in use per team (line) against quota (dashed); '
           'red marks: a job of the team preempted</text>']
    for index, team in enumerate(shown):
        top = 40 + index * (PANEL + GAP)
        quota = _quota(team)
        peak = max([quota, 1, *(p["accelerators"] for p in team["usage"])])

        def y(value: float, top: int = top, peak: int = peak) -> float:
            return top + PANEL - PANEL * value / peak

        name = escape(team["team"])
        out.append(f'<text x="10" y="{top + PANEL / 2:.1f}">{name}</text>')
        out.append(f'<text x="10" y="{top + PANEL / 2 + 14:.1f}" fill="#555">quota {quota}, peak {peak}</text>')
        out.append(f'<rect x="{MARGIN_LEFT}" y="{top}" width="{plot_w}" height="{PANEL}" fill="none" stroke="#ccc"/>')
        points, level = [(x(start), y(0))], 0
        for point in team["usage"]:
            points.append((x(point["at"]), y(level)))
            level = point["accelerators"]
            points.append((x(point["at"]), y(level)))
        points.append((x(end), y(level)))
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>')
        out.append(f'<line x1="{MARGIN_LEFT}" x2="{MARGIN_LEFT + plot_w}" y1="{y(quota):.1f}" y2="{y(quota):.1f}" '
                   'stroke="#333" stroke-dasharray="4 3"/>')
        for at in _preemptions(summary, team["team"]):
            out.append(f'<line x1="{x(at):.1f}" x2="{x(at):.1f}" y1="{top}" y2="{top + PANEL}" stroke="#d62728"/>')
    axis = 40 + len(shown) * (PANEL + GAP)
    out.append(f'<text x="{MARGIN_LEFT}" y="{axis}">{start} s</text>')
    out.append(f'<text x="{MARGIN_LEFT + plot_w}" y="{axis}" text-anchor="end">{end} s</text>')
    if left_out:
        names = escape(", ".join(t["team"] for t in left_out))
        out.append(f'<text x="10" y="{axis + 18}">not drawn (least used): {names}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
