"""Benchmark: wall time of `hyperpod-kit validate` on dev, prod and a generated 500-team config, and of
`cdk synth` on dev and prod next to an empty CDK app synthesized in the same run.

validate: the whole command as an admin runs it (a fresh Python process, median of 7 runs) and
load + validate inside one process (median of 7, after one warm-up). Targets on the 2-core reference
machine: prod <= 0.3 s, 500 teams <= 2 s (whole command).
synth: the real CDK CLI, median of 5 interleaved runs each; target: dev and prod <= 1.5 x an empty app
as `cdk init` makes it. "x bare" compares with an empty app that skips the built-in template check too.
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
SYNTH_RUNS = 5
TARGETS = {"prod": 0.3, "500 teams": 2.0}
SYNTH_TARGET_RATIO = 1.5
CDK = ROOT / "node_modules" / ".bin" / "cdk"
# Two empty apps: as `cdk init` makes one (the target's yardstick), and with CDK's built-in template
# check off as app.py has it, so the kit's own cost shows too ("x bare").
EMPTY_APPS = {
    "empty app (cdk init)": "App()",
    "empty app (as app.py)": "App(builtin_cloud_formation_validation=False)",
}
EMPTY_APP = "from aws_cdk import App, Stack\n\napp = {}\nStack(app, 'Empty')\napp.synth()\n"


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
        'environment: bench\naccount: "111122223333"\nregion: us-east-1\navailability_zone_ids: [use1-az4, use1-az6]\n'
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


def synth_once(workdir: Path, out: Path, *context: str) -> float:
    args = [str(CDK), "synth", "--quiet", "--no-notices", "-o", str(out)]
    for item in context:
        args += ["-c", item]
    start = time.perf_counter()
    result = subprocess.run(args, cwd=workdir, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"cdk synth failed in {workdir}: {result.stderr[-2000:]}")
    return seconds


def synth_benchmark() -> bool:
    """Print synth times; True when dev and prod stay within the target ratio of the empty app.

    The three apps take turns, run after run, so that whatever else the machine does at the moment
    weighs on all of them alike; each figure is the median of SYNTH_RUNS."""
    with tempfile.TemporaryDirectory() as tmp:
        apps: dict[str, tuple[Path, tuple[str, ...]]] = {}
        for index, (name, constructor) in enumerate(EMPTY_APPS.items()):
            folder = Path(tmp) / f"empty{index}"
            folder.mkdir()
            (folder / "app.py").write_text(EMPTY_APP.format(constructor))
            (folder / "cdk.json").write_text(f'{{"app": "{sys.executable} app.py"}}\n')
            apps[name] = (folder, ())
        apps.update({env: (ROOT, (f"env={env}",)) for env in ("dev", "prod")})
        runs: dict[str, list[float]] = {name: [] for name in apps}
        for _ in range(SYNTH_RUNS):
            for name, (folder, context) in apps.items():
                runs[name].append(synth_once(folder, Path(tmp) / f"out-{len(runs[name])}-{name}".replace(" ", "_"),
                                             *context))
        base = statistics.median(runs["empty app (cdk init)"])
        bare = statistics.median(runs["empty app (as app.py)"])
        print(f"\n{'cdk synth':<22} {'wall (s)':>9} {'x empty':>8} {'x bare':>7} {'target':>7}")
        ok = True
        for name, times in runs.items():
            seconds = statistics.median(times)
            ratio = seconds / base
            if name in ("dev", "prod"):
                ok &= ratio <= SYNTH_TARGET_RATIO
                verdict = f"{SYNTH_TARGET_RATIO:>7} {'ok' if ratio <= SYNTH_TARGET_RATIO else 'OVER'}"
            else:
                verdict = f"{'-':>7}"
            print(f"{name:<22} {seconds:>9.2f} {ratio:>8.2f} {seconds / bare:>7.2f} {verdict}")
    return ok


def main() -> int:
    failed = validate_benchmark()
    failed |= not synth_benchmark()
    return 1 if failed else 0


def validate_benchmark() -> bool:
    """Print validate times; True when a target is missed."""
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
                raise SystemExit(f"{name}: not valid: {[f.render() for f in report.errors][:3]}")
            in_process = median_seconds(lambda: check_file(path))
            command = median_seconds(lambda: subprocess.run([str(cli), "validate", str(path), "--format", "json"],
                                                            check=True, capture_output=True))
            target = TARGETS.get(name)
            verdict = "" if target is None else (" ok" if command <= target else " OVER")
            failed |= verdict == " OVER"
            lines = len(path.read_text().splitlines())
            print(f"{name:<10} {lines:>6} {command:>12.3f} {in_process:>15.3f} {target or '-':>11}{verdict}")
    return failed


if __name__ == "__main__":
    sys.exit(main())
