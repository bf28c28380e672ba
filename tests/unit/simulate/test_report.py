"""The simulation report's text form: the cluster line says what its denominator is (the accelerators the
cluster has, over the simulated window) and rounds the hours to a tenth; the JSON keeps them exact."""

from __future__ import annotations

import json

from support.cli_runner import invoke
from support.paths import ROOT

DEV = str(ROOT / "config" / "dev.yaml")
SEED = str(ROOT / "config" / "workloads" / "dev-seed-002.yaml")


def test_the_cluster_line_names_the_accelerators_and_window_behind_its_hours():
    document = json.loads(invoke("simulate", DEV, "--workload", SEED, "--format", "json").output)
    util = document["utilization"]
    # dev has 4 ml.g5.12xlarge of 4 GPUs (config/dev.yaml): the hours on offer are 16 x the window
    assert util["accelerators"] == 16
    assert abs(util["accelerator_hours_available"] - 16 * document["window"]["end"] / 3600) < 0.001
    text = invoke("simulate", DEV, "--workload", SEED).output
    line = next(line for line in text.splitlines() if line.startswith("cluster: "))
    used, available = (f"{util[key]:.1f}".removesuffix(".0") for key in ("accelerator_hours_used",
                                                                           "accelerator_hours_available"))
    assert line.startswith(f"cluster: {used} accelerator-hours used of the {available} its 16 accelerators offer in ")
    assert line.endswith(f"({100 * util['ratio']:.1f} %)")
    assert str(util["accelerator_hours_available"]) not in line  # 37.333: not the unrounded figure
