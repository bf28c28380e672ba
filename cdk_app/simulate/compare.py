"""What a config change does to the same workload: per team, how waits, preemptions, use and borrowing move
between two simulation summaries (the baseline - another git ref's config - and the config as it is)."""

from __future__ import annotations

from typing import Any

from cdk_app.support.text_table import aligned

METRICS = (
    ("wait median s", lambda t: t["waits"]["median_s"]),
    ("wait p95 s", lambda t: t["waits"]["p95_s"]),
    ("preempted", lambda t: t["preemptions"]["suffered"]),
    ("never admitted", lambda t: t["unschedulable"]),
    ("used", lambda t: t["accelerator_hours"]["used"]),
    ("borrowed", lambda t: t["accelerator_hours"]["borrowed"]),
    ("lent", lambda t: t["accelerator_hours"]["lent"]),
)


def compare_runs(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per team of either run: each metric before and after (None where the team is absent)."""
    old = {t["team"]: t for t in before["teams"]}
    new = {t["team"]: t for t in after["teams"]}
    rows = []
    for team in [*new, *(name for name in old if name not in new)]:
        row: dict[str, Any] = {"team": team}
        for name, read in METRICS:
            row[name] = {"before": read(old[team]) if team in old else None,
                         "after": read(new[team]) if team in new else None}
        rows.append(row)
    before_u, after_u = ((run["utilization"] or {}).get("ratio") for run in (before, after))
    rows.append({"team": "(cluster)", "utilization": {"before": before_u, "after": after_u}})
    return rows


def _moved(cell: dict[str, Any]) -> str:
    b, a = cell["before"], cell["after"]
    if b == a:
        return "-" if b is None else f"{b}"
    return f"{'-' if b is None else b} -> {'-' if a is None else a}"


def render_comparison(against: dict[str, Any]) -> str:
    lines = [f"against {against['ref']} (before -> after; accelerator-hours, seconds)"]
    header = ("team", *(name for name, _ in METRICS))
    rows = [header]
    for row in against["teams"]:
        if "utilization" in row:
            cell = row["utilization"]
            pct = {k: None if v is None else round(100 * v, 1) for k, v in cell.items()}
            lines.append(f"  cluster utilisation %: {_moved(pct)}")
            continue
        rows.append((row["team"], *(_moved(row[name]) for name, _ in METRICS)))
    return "\n".join([lines[0], *aligned(rows, indent="  "), *lines[1:]])
