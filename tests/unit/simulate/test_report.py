"""The simulation report's text form: the cluster line says what its denominator is (the accelerators the
cluster has, over the simulated window) and rounds the hours to a tenth; the JSON keeps them exact."""

from __future__ import annotations

import json

from support.cli_runner import invoke
from support.paths import ROOT
from support.small_config import HEAD

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



def cluster_line(write_config, config: str, job: str) -> tuple[dict, str]:
    path = str(write_config(HEAD + config))
    workload = str(write_config(f"jobs:\n  - {{name: j1, team: t0, submit_at: 0, runtime: 3600, pods: 1, per_pod: {job}}}\n",
                                "jobs.yaml"))
    document = json.loads(invoke("simulate", path, "--workload", workload, "--format", "json").output)
    text = invoke("simulate", path, "--workload", workload).output
    return document["utilization"], next(line for line in text.splitlines() if line.startswith("cluster: "))


def test_a_flexible_group_counts_once_in_the_cluster_line(write_config):
    # 2 instances that are ml.g5.12xlarge or ml.g5.24xlarge (4 GPUs each, EC2's figures): 8 GPUs, not 8 per type.
    util, line = cluster_line(write_config, (
        "hyperpod:\n  instance_groups:\n    - {name: flex, instance_type: ml.g5.12xlarge, "
        "fallback_instance_types: [ml.g5.24xlarge], count: 2}\n"
        "teams:\n  - name: t0\n    quota:\n      - {instance_type: ml.g5.12xlarge, count: 1}\n"),
        "{instance_type: ml.g5.12xlarge, accelerators: 4}")
    assert util["accelerators"] == 8
    assert line.startswith("cluster: 4 accelerator-hours used of the 8 its 8 accelerators offer in 60.0m (50.0 %)")


def test_a_partition_only_cluster_says_its_partitions_not_zero_accelerators(write_config):
    # ml.p5.48xlarge: 8 H100 GPUs of 7 x 1g.10gb each (NVIDIA's MIG profiles).
    util, line = cluster_line(write_config, (
        "hyperpod:\n  instance_groups:\n    - name: mig\n      instance_type: ml.p5.48xlarge\n      count: 1\n"
        "      labels: {nvidia.com/mig.config: all-1g.10gb}\n"
        "teams:\n  - name: t0\n    quota:\n      - instance_type: ml.p5.48xlarge\n"
        "        accelerator_partition: {type: mig-1g.10gb, count: 20}\n"),
        "{instance_type: ml.p5.48xlarge, mig: 'mig-1g.10gb:2'}")
    assert (util["accelerators"], util["partitions"]) == (0, {"mig-1g.10gb on ml.p5.48xlarge": 56})
    assert line.startswith("cluster: its GPUs are all MIG partitions (56 mig-1g.10gb on ml.p5.48xlarge)")
    assert "0 accelerators" not in line
