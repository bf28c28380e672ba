"""Benchmark: wall time of `hyperpod-kit validate` on dev, prod and a generated 500-team config.

Reports two figures per config: the whole command as an admin runs it (a fresh Python process,
median of 7 runs) and load + validate inside one process (median of 7 runs, after one warm-up).
Targets on the 2-core reference machine: prod <= 0.3 s, 500 teams <= 2 s (whole command).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cdk_app.validator.report import check_file  # noqa: E402

RUNS = 7
TARGETS = {"prod": 0.3, "500 teams": 2.0}


def generated_config(teams: int) -> str:
    """A valid config: teams x 1 instance of ml.g5.12xlarge over groups of 10 instances."""
    groups = "".join(
        f"    - name: g{i}\n      instance_type: ml.g5.12xlarge\n      count: 10\n" for i in range(teams // 10)
    )
    team_text = "".join(
        f"  - name: team-{i:03d}\n    fair_share_weight: {i % 101}\n    sharing_strategy: LendAndBorrow\n"
        f"    borrow_limit: 100\n    default_priority_class: normal\n"
        f"    principals: [arn:aws:iam::111122223333:role/team-{i:03d}]\n"
        f"    quota:\n      - instance_type: ml.g5.12xlarge\n        accelerators: 4\n"
        for i in range(teams)
    )
    return (
        'environment: bench\naccount: "111122223333"\nregion: us-east-1\navailability_zone_ids: [use1-az4]\n'
        f"hyperpod:\n  instance_groups:\n{groups}"
        "cluster_policy:\n  priority_classes:\n    - name: high\n      weight: 90\n    - name: normal\n      weight: 50\n"
        f"teams:\n{team_text}"
    )


def median_seconds(action) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    cli = Path(sys.executable).parent / "hyperpod-kit"
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "teams500.yaml"
        big.write_text(generated_config(500))
        configs = {"dev": ROOT / "config/dev.yaml", "prod": ROOT / "config/prod.yaml", "500 teams": big}
        print(f"{'config':<10} {'lines':>6} {'command (s)':>12} {'in-process (s)':>15} {'target (s)':>11}")
        failed = False
        for name, path in configs.items():
            report = check_file(path)  # warm-up, and the config must be valid to be a fair benchmark
            if not report.ok:
                print(f"{name}: not valid: {[f.render() for f in report.errors][:3]}")
                return 1
            in_process = median_seconds(lambda: check_file(path))
            command = median_seconds(lambda: subprocess.run([str(cli), "validate", str(path), "--format", "json"],
                                                            check=True, capture_output=True))
            target = TARGETS.get(name)
            verdict = "" if target is None else (" ok" if command <= target else " OVER")
            failed |= verdict == " OVER"
            lines = len(path.read_text().splitlines())
            print(f"{name:<10} {lines:>6} {command:>12.3f} {in_process:>15.3f} {target or '-':>11}{verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
