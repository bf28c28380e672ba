"""Benchmark: the kit's speed targets, each a ratio of two things measured in the same run (medians; the compared
commands take turns, run after run, so whatever else the machine does weighs on both alike).

validate (whole processes, as an admin runs it): prod <= 1.5 x `python -c "import pydantic, yaml"`;
  in-process load + validate of 5,000 generated teams <= 1 s.
synth (the real CDK CLI): prod <= 0.8 x and 500 generated teams <= 1.5 x an empty app as `cdk init` makes it;
  the 500-team environment must also pass cfn-lint and fit every CloudFormation limit (read from its templates).
Exit status 1 when a target is missed.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from cfnlint.helpers import LIMITS  # noqa: E402
from generated_config import generated_config  # noqa: E402

from cdk_app.validator.report import check_file  # noqa: E402

RUNS = 7
SYNTH_RUNS = 5
VALIDATE_RATIO = 1.5  # prod's validate command / `python -c "import pydantic, yaml"`
IN_PROCESS_5000 = 1.0  # seconds
SYNTH_RATIOS = {"prod": 0.8, "500 teams": 1.5}  # x the `cdk init` empty app
CDK = ROOT / "node_modules" / ".bin" / "cdk"
CLI = Path(sys.executable).parent / "hyperpod-kit"
# Two empty apps: as `cdk init` makes one (the yardstick), and with CDK's built-in template check off as app.py
# has it ("x bare" shows the kit's own cost).
EMPTY_APPS = {"empty app (cdk init)": "App()", "empty app (as app.py)": "App(builtin_cloud_formation_validation=False)"}
EMPTY_APP = "from aws_cdk import App, Stack\n\napp = {}\nStack(app, 'Empty')\napp.synth()\n"


def timed(args: list[str], cwd: Path = ROOT, codes: tuple[int, ...] = (0,)) -> float:
    start = time.perf_counter()
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    # Every benchmarked command must do its whole work: a synth or validate that stops early is fast and wrong.
    if result.returncode not in codes:
        raise SystemExit(f"{' '.join(args)} failed ({result.returncode}): {result.stderr[-2000:]}")
    return seconds


FLOOR = "floor: + BaseModel, click"
Command = tuple[list[str], Path, tuple[int, ...]]  # arguments, folder, the exit codes it must end with


def interleaved(commands: dict[str, Command], runs: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (args, cwd, codes) in commands.items():
            times[name].append(timed(args, cwd, codes))
    return {name: statistics.median(values) for name, values in times.items()}


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def validate_benchmark(tmp: Path) -> bool:
    """True when every validate target is met."""
    big = tmp / "teams5000.yaml"
    big.write_text(generated_config(5000))
    configs = {"dev": ROOT / "config/dev.yaml", "prod": ROOT / "config/prod.yaml", "5000 teams": big}
    commands: dict[str, Command] = {"python -c 'import pydantic, yaml'": ([sys.executable, "-c", "import pydantic, yaml"], ROOT, (0,))}
    # What any pydantic-model CLI pays before its own code runs (`import pydantic` alone defers BaseModel's
    # machinery): shows how much of validate's ratio is the kit's.
    commands[FLOOR] = ([sys.executable, "-c", "import yaml, click; from pydantic import BaseModel"], ROOT, (0,))
    # 5,000 teams fit one environment (their guardrails travel as an S3 asset, the teams in team stacks):
    # validate checks the whole file and exits 0.
    commands.update({f"validate {name}": ([str(CLI), "validate", str(path), "--format", "json"], ROOT, (0,))
                     for name, path in configs.items()})
    whole = interleaved(commands, RUNS)
    base = whole["python -c 'import pydantic, yaml'"]
    print(f"{'whole process':<34} {'wall (s)':>9} {'x import pydantic, yaml':>24}")
    for name, seconds in whole.items():
        target = f"  target {VALIDATE_RATIO}x: {verdict(seconds / base <= VALIDATE_RATIO)}" if name == "validate prod" else ""
        print(f"{name:<34} {seconds:>9.3f} {seconds / base:>24.2f}{target}")
    ok = whole["validate prod"] / base <= VALIDATE_RATIO
    print(f"\n{'in-process load + validate':<34} {'lines':>9} {'median (s)':>11}")
    for name, path in configs.items():
        check_file(path)  # warm-up
        times = []
        for _ in range(RUNS):
            start = time.perf_counter()
            check_file(path)
            times.append(time.perf_counter() - start)
        seconds = statistics.median(times)
        target = f"  target {IN_PROCESS_5000} s: {verdict(seconds <= IN_PROCESS_5000)}" if name == "5000 teams" else ""
        ok &= name != "5000 teams" or seconds <= IN_PROCESS_5000
        print(f"{name:<34} {len(path.read_text().splitlines()):>9} {seconds:>11.3f}{target}")
    return ok


def limits_report(out: Path) -> bool:
    """cfn-lint over the synthesized templates, and each stack's counts against CloudFormation's limits."""
    templates = sorted(out.glob("*.template.json"))
    lint = subprocess.run([str(Path(sys.executable).parent / "cfn-lint"), "--regions", "us-east-1",
                           "--ignore-checks", "W3005", "--", *map(str, templates)], capture_output=True, text=True)
    print(f"\n500 teams: {len(templates)} stacks; cfn-lint: {verdict(lint.returncode == 0)}"
          + (f"\n{lint.stdout[-2000:]}" if lint.returncode else ""))
    ok = lint.returncode == 0
    worst = {"resources": 0, "outputs": 0, "parameters": 0, "bytes": 0}
    for path in templates:
        template = json.loads(path.read_text())
        counts = {"resources": len(template["Resources"]), "outputs": len(template.get("Outputs", {})),
                  "parameters": len(template.get("Parameters", {})), "bytes": path.stat().st_size}
        worst = {k: max(worst[k], v) for k, v in counts.items()}
    limits = {"resources": LIMITS["Resources"]["number"], "outputs": LIMITS["Outputs"]["number"],
              "parameters": LIMITS["Parameters"]["number"], "bytes": LIMITS["template"]["body"]}
    for what, limit in limits.items():
        ok &= worst[what] <= limit
        print(f"  largest stack's {what}: {worst[what]:,} of {limit:,} ({verdict(worst[what] <= limit)})")
    return ok


def synth_benchmark(tmp: Path) -> bool:
    """True when every synth target is met."""
    commands: dict[str, Command] = {}
    outputs = tmp / "synth"
    for index, (name, constructor) in enumerate(EMPTY_APPS.items()):
        folder = tmp / f"empty{index}"
        folder.mkdir()
        (folder / "app.py").write_text(EMPTY_APP.format(constructor))
        (folder / "cdk.json").write_text(f'{{"app": "{sys.executable} app.py"}}\n')
        commands[name] = ([str(CDK), "synth", "--quiet", "--no-notices", "-o", str(outputs / f"empty{index}")], folder, (0,))
    big = tmp / "teams500.yaml"
    big.write_text(generated_config(500))
    for name, context in (("dev", ["env=dev"]), ("prod", ["env=prod"]), ("500 teams", ["env=bench", f"config={big}"])):
        out = outputs / name.replace(" ", "-")
        commands[name] = ([str(CDK), "synth", "--quiet", "--no-notices", "-o", str(out),
                           *(arg for c in context for arg in ("-c", c))], ROOT, (0,))
    medians = interleaved(commands, SYNTH_RUNS)
    base, bare = medians["empty app (cdk init)"], medians["empty app (as app.py)"]
    print(f"\n{'cdk synth':<22} {'wall (s)':>9} {'x empty':>8} {'x bare':>7}")
    ok = True
    for name, seconds in medians.items():
        target = SYNTH_RATIOS.get(name)
        note = f"  target {target}x: {verdict(seconds / base <= target)}" if target else ""
        ok &= target is None or seconds / base <= target
        print(f"{name:<22} {seconds:>9.2f} {seconds / base:>8.2f} {seconds / bare:>7.2f}{note}")
    return limits_report(outputs / "500-teams") and ok


def main() -> int:
    # The kit as installed: a regular pip install byte-compiles a package, the editable one of `make setup` does
    # not, and with PYTHONDONTWRITEBYTECODE set (as on this machine) every command would compile the kit's
    # modules from source again while pydantic and yaml load from their .pyc (~60 ms of validate's ~230 ms).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "cdk_app")], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        ok = validate_benchmark(Path(tmp))
        ok &= synth_benchmark(Path(tmp))
    print(f"\n{'all targets met' if ok else 'a target was missed'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
