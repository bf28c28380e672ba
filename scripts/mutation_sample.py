"""Mutation testing of one module by a seeded random sample of its mutants.

A full `mutmut run` of a big module (the validator's rules have about 2,150 mutants) takes hours on a
shared machine, mostly in mutants that survive. A uniform random sample measures the kill rate honestly in a
fraction of the time: it prints the sample's counts, the kill rate with its 95 % Wilson confidence interval, and
the surviving mutants' names (inspect one with `mutmut show <name>`).

Usage (from the repository root; `make mutation-sample` wraps it):
    python scripts/mutation_sample.py cdk_app.validator.rules.capacity --n 200 --seed 1

The same module, N and seed always draw the same mutants (the names are sorted before sampling), so a result can
be re-run after a test is added. N at or above the module's mutant count runs them all.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

# mutmut 3.8's own verdicts: these statuses mean the tests noticed the mutant.
DETECTED = ("killed", "timeout")
Z_95 = 1.959964


def wilson(detected: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (stays inside [0, 1] even at 0 or n successes)."""
    if n == 0:
        return 0.0, 1.0
    p = detected / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def module_mutants(module: str) -> tuple[Path, list[str]]:
    """Generate the module's mutants under mutants/ (what `mutmut run` does first) and return their names."""
    from mutmut.__main__ import create_file_mutants  # mutmut's per-file generator, as `mutmut run` calls it

    source = Path(*module.split(".")).with_suffix(".py")
    if not source.is_file():
        sys.exit(f"mutation_sample: no module {module} (expected {source})")
    result = create_file_mutants(source)
    if result.error:
        raise result.error
    meta = Path("mutants") / f"{source}.meta"
    return meta, sorted(json.loads(meta.read_text())["exit_code_by_key"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="dotted module name, e.g. cdk_app.validator.rules")
    parser.add_argument("--n", type=int, default=200, help="sample size (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--children", type=int, default=1,
                        help="mutants run at once (default 1: the machine is usually shared; 2 on a quiet 2-core one)")
    args = parser.parse_args()

    from mutmut.stats import status_by_exit_code

    meta, names = module_mutants(args.module)
    sample = sorted(random.Random(args.seed).sample(names, min(args.n, len(names))))
    print(f"{args.module}: {len(names)} mutants, sampling {len(sample)} (seed {args.seed})", flush=True)
    mutmut = Path(sys.executable).parent / "mutmut"  # the one installed next to this Python (.venv)
    subprocess.run([str(mutmut), "run", "--max-children", str(args.children), *sample], check=True)

    exit_codes = json.loads(meta.read_text())["exit_code_by_key"]
    status = {name: status_by_exit_code[exit_codes[name]] for name in sample}
    counts = Counter(status.values())
    detected = sum(counts[s] for s in DETECTED)
    low, high = wilson(detected, len(sample))
    print(f"\n{args.module}: {len(sample)} of {len(names)} mutants run (seed {args.seed})")
    for name, count in sorted(counts.items()):
        print(f"  {name}: {count}")
    print(f"  kill rate: {detected}/{len(sample)} = {detected / len(sample):.1%} (95 % CI {low:.1%} - {high:.1%})")
    for name in sorted(n for n, s in status.items() if s not in DETECTED):
        print(f"  {status[name]}: {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
