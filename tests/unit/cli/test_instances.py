"""`hyperpod-kit instances`: the catalogue HPK201 points to, per region what cfn-lint's data says HyperPod offers."""

from __future__ import annotations

import json

from click.testing import CliRunner
from support.cli_runner import invoke, run
from support.paths import ROOT

from cdk_app.cli.main import main
from cdk_app.domain.regions import cfnlint_data


def region_enum(region: str) -> set[str]:
    """AWS::SageMaker::Cluster's instance types in `region`, read from cfn-lint's data directly."""
    path = cfnlint_data() / "schemas" / "extensions" / "aws_sagemaker_cluster" / "instancetype_enum.json"
    return set(json.loads(path.read_text())[region]["enum"])


def test_a_region_lists_exactly_the_known_types_hyperpod_offers_there():
    listed = json.loads(invoke("instances", "--region", "us-west-2", "--format", "json").output)
    everything = {row["instance_type"] for row in json.loads(invoke("instances", "--format", "json").output)}
    assert {row["instance_type"] for row in listed} == everything & region_enum("us-west-2")
    assert everything > {row["instance_type"] for row in listed}


def test_the_table_shows_the_figures_a_quota_is_written_in():
    result = invoke("instances", "--family", "g5")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].split()[:4] == ["instance", "type", "vCPU", "memory"]
    assert lines[1].split()[0] == "ml.g5.xlarge"  # smallest first within a family
    row = next(line.split() for line in lines if line.startswith("ml.g5.12xlarge "))
    assert row[:5] == ["ml.g5.12xlarge", "48", "192", "4", "A10G"]  # EC2: 48 vCPU, 192 GiB, 4 A10G


def test_the_unknown_type_finding_names_the_command():
    text = (ROOT / "config/dev.yaml").read_text().replace("instance_type: ml.m5.2xlarge\n      count: 2",
                                                          "instance_type: ml.m5.2xlarg\n      count: 2")
    result = CliRunner().invoke(main, ["validate", "-"], input=text)
    assert "`hyperpod-kit instances` lists the HyperPod types" in result.output
    assert run("instances", "--family", "m5").stdout.count("ml.m5.2xlarge") == 1


def test_an_unknown_region_exits_2_with_the_nearest():
    result = invoke("instances", "--region", "eu-wset-1")
    assert result.exit_code == 2 and "did you mean eu-west-1?" in result.output
