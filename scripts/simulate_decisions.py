"""Records the digests of tests/support/simulate_decisions.py's scenarios from the scheduler as it stands into
tests/support/data/simulate_decisions.json (run it only on a scheduler whose decisions are the reference: the
tests hold later changes to them). `--check` compares instead of writing and exits 1 on a difference."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "tests"):
    sys.path.insert(0, str(extra))

from support.simulate_decisions import RECORDED, SCENARIOS, digest, recorded  # noqa: E402


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    if argv and not check:
        print("usage: simulate_decisions.py [--check]", file=sys.stderr)
        return 2
    out, same = {}, True
    for name in SCENARIOS:
        start = time.perf_counter()
        out[name] = digest(name)
        print(f"{name:20} {out[name]}  {time.perf_counter() - start:.1f} s")
        if check and recorded().get(name) != out[name]:
            print(f"  DIFFERS from the recording: {recorded().get(name)}")
            same = False
    if check:
        return 0 if same else 1
    RECORDED.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
