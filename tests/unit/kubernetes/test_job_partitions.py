"""`hyperpod-kit job --mig`: a job on GPU partitions, refused where Kueue would never admit it (the team's
partition reach, which the real Kueue confirms in tests/realk8s/test_kueue_partitions.py), and written as the
PyTorchJob CRD schema and Kubernetes' core validation take it."""

from __future__ import annotations

import jsonschema
import pytest
from support.cli_runner import run as cli
from support.crd_schemas import PYTORCHJOB_SCHEMA, core_refusals
from support.mig_config import P5, RESOURCE, write_mig_config

from cdk_app.config.loader import load_config
from cdk_app.kubernetes.job_partitions import parse_mig
from cdk_app.kubernetes.job_templates import JobRequest, JobSpecError, render


@pytest.fixture
def config(tmp_path):
    return load_config(write_mig_config(tmp_path)).config


def request(team: str = "john", mig: tuple[str, int] = ("mig-1g.10gb", 1), **more) -> JobRequest:
    return JobRequest(team=team, priority="high", name="small", image="img", command=("python", "x.py"),
                      instance_type=P5, mig=mig, **more)


def test_a_job_on_partitions_asks_for_them_on_nodes_whose_geometry_is_applied(config):
    manifest = render(config, request(mig=("mig-1g.10gb", 3), cpu="2", memory="8Gi"))
    jsonschema.validate(manifest, PYTORCHJOB_SCHEMA)
    [pod] = [spec["template"]["spec"] for spec in manifest["spec"]["pytorchReplicaSpecs"].values()]
    assert not core_refusals(pod)
    [container] = pod["containers"]
    assert container["resources"] == {"requests": {RESOURCE: 3, "cpu": "2", "memory": "8Gi"},
                                      "limits": {RESOURCE: 3}}
    assert "nvidia.com/gpu" not in container["resources"]["limits"]
    assert pod["nodeSelector"] == {"node.kubernetes.io/instance-type": P5, "nvidia.com/mig.config.state": "success"}
    # The device plugin picks the partition: the image's NVIDIA_VISIBLE_DEVICES must not hide it.
    assert "NVIDIA_VISIBLE_DEVICES" not in {e["name"] for e in container.get("env", [])}


@pytest.mark.parametrize("team, partitions, ok", [("john", 30, True), ("john", 31, False),
                                                   ("smith", 32, True), ("smith", 33, False)])
def test_partitions_up_to_the_teams_reach_and_not_one_more(config, team, partitions, ok):
    job = request(team, ("mig-1g.10gb", partitions))
    if ok:
        render(config, job)
    else:
        with pytest.raises(JobSpecError, match=f"= {partitions} partitions of {P5}, more than team '{team}' can "
                                               "ever get"):
            render(config, job)


@pytest.mark.parametrize("mig, accelerators, message", [
    (("mig-1g.20gb", 1), None, "team 'john' has no quota of mig-1g.20gb partitions on ml.p5.48xlarge"),
    (("mig-1g.18gb", 1), None, "ml.p5.48xlarge's GPU has no such MIG profile; it offers mig-1g.10gb, mig-1g.20gb"),
    (("mig-1g.10gb", 57), None, "no ml.p5.48xlarge node holds more than 56 mig-1g.10gb"),
    (("mig-1g.10gb", 1), 2, "a pod asks for whole GPUs or for partitions, not both"),   # JobOptionError
])
def test_refusals_say_why(config, mig, accelerators, message):
    with pytest.raises(JobSpecError, match=message.replace(".", r"\.")):
        render(config, request(mig=mig, accelerators_per_node=accelerators))


@pytest.mark.parametrize("text, parsed", [("mig-1g.10gb", ("mig-1g.10gb", 1)), ("nvidia.com/mig-3g.40gb:2",
                                                                                 ("mig-3g.40gb", 2))])
def test_the_option_takes_a_profile_and_a_count(text, parsed):
    assert parse_mig(text) == parsed


@pytest.mark.parametrize("config_text", [None, "environment: dev\n"])
def test_mig_with_accelerators_is_bad_usage_before_the_config_is_read(tmp_path, config_text):
    # Red team: with a config with findings the contradiction printed the findings (exit 1); with a valid one it
    # was a finding (exit 1). Options that contradict each other are bad usage whatever the config (exit 2).
    path = write_mig_config(tmp_path) if config_text is None else tmp_path / "broken.yaml"
    if config_text is not None:
        path.write_text(config_text)
    result = cli("job", "--config", str(path), "--team", "john", "--name", "a", "--image", "i",
                 "--instance-type", P5, "--mig", "mig-1g.10gb:2", "--accelerators", "2", "--", "python")
    assert result.returncode == 2, result.stderr
    assert "a pod asks for whole GPUs or for partitions, not both" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_option_text_is_a_usage_error_without_a_traceback(tmp_path):
    path = write_mig_config(tmp_path)
    for bad in ("1g.10gb", "mig-1g.10gb:0", "mig-1g.10gb:x", "mig-1g.10gb:57"):
        result = cli("job", "--config", str(path), "--team", "john", "--name", "a", "--image", "i",
                     "--instance-type", P5, "--mig", bad, "--", "python")
        assert result.returncode == 2 and "Traceback" not in result.stderr, (bad, result.stderr)
        assert "Invalid value for '--mig'" in result.stderr


def test_whole_gpus_are_refused_where_a_flexible_groups_label_partitions_them():
    # r3_f3_partitions_only.yaml: the red team's r3_f3 with miggy's 56 mig-1g.10gb of p4de in place of
    # applied-science's whole p4de GPUs. flexmig (p5 or p4de, all-1g.10gb) is the only p4de group: as p4de its
    # GPUs are partitions too. The p5 groups of prod have whole GPUs.
    from support.paths import SUPPORT
    config = load_config(SUPPORT / "adversarial" / "issue31" / "r3_f3_partitions_only.yaml").config
    whole = JobRequest(team="miggy", priority="training", name="w", image="img", command=("python", "x.py"),
                       instance_type="ml.p4de.24xlarge")
    with pytest.raises(JobSpecError) as err:
        render(config, whole)
    assert str(err.value).endswith("ask for partitions (--mig with mig-1g.10gb), or whole GPUs on ml.p5.48xlarge")
    render(config, JobRequest(team="miggy", priority="training", name="w", image="img", command=("python", "x.py"),
                              instance_type="ml.p4de.24xlarge", mig=("mig-1g.10gb", 28), nodes=2))
