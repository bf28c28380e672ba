"""An environment with a partitioned instance group, for the tests of GPU partitions across tiers: the base
config (tests/support/adversarial/base.yaml) plus one ml.p5.48xlarge node partitioned all-1g.10gb (7 per GPU in
the pinned chart's MIG manager configuration, 8 GPUs: 56 partitions), john holding 20 of them (borrow_limit 50)
and smith 30 with an absolute borrow limit of 2, and both teams' whole-GPU quotas as in the base."""

from __future__ import annotations

from pathlib import Path

from support.paths import SUPPORT

BASE = (SUPPORT / "adversarial" / "base.yaml").read_text()
CPU_GROUP = "    - name: cpu\n      instance_type: ml.m5.2xlarge\n      count: 2\n"
MIG_GROUP = ("    - name: mig\n      instance_type: ml.p5.48xlarge\n      count: 1\n"
             "      labels:\n        nvidia.com/mig.config: all-1g.10gb\n")
JOHN_QUOTA = "  - name: john\n    borrow_limit: 50\n    quota:\n"
SMITH_QUOTA = "  - name: smith\n    quota:\n"
P5, PROFILE, RESOURCE = "ml.p5.48xlarge", "mig-1g.10gb", "nvidia.com/mig-1g.10gb"


def mig_config_text(john: int = 20, smith: int = 30, smith_limit: int | None = 2) -> str:
    text = BASE.replace(CPU_GROUP, CPU_GROUP + MIG_GROUP)
    text = text.replace(JOHN_QUOTA, JOHN_QUOTA + f"      - instance_type: {P5}\n"
                                                f"        accelerator_partition: {{type: {PROFILE}, count: {john}}}\n")
    limit = ("" if smith_limit is None else
             f"    absolute_borrow_limits:\n      - instance_type: {P5}\n"
             f"        accelerator_partition: {{type: {PROFILE}, count: {smith_limit}}}\n")
    return text.replace(SMITH_QUOTA, "  - name: smith\n" + limit + "    quota:\n" + f"      - instance_type: {P5}\n"
                        f"        accelerator_partition: {{type: {PROFILE}, count: {smith}}}\n")


def write_mig_config(directory: Path, **amounts: int | None) -> Path:
    path = directory / "mig.yaml"
    path.write_text(mig_config_text(**amounts))
    return path
