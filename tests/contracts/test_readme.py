"""README.md is the front door: its commands, codes, config reference and stack outputs must match the code."""

import json
import re

import pytest
from support.paths import ROOT
from support.synthesis import env_assembly

from cdk_app.config.reference import codes_markdown, config_reference_markdown

README = (ROOT / "README.md").read_text()


def test_codes_table_matches_the_code():
    assert codes_markdown() in README, "regenerate the codes table from cdk_app/config/reference.py"


def test_config_reference_matches_the_model():
    assert config_reference_markdown() in README, "regenerate the config reference from cdk_app/config/reference.py"


def test_ci_runs_the_readme_test_command():
    assert "make test     # set up and run every test" in README
    assert "make test" in (ROOT / ".ci" / "run").read_text()


# How the README names a stack output: OutputKey=='X', "output `X`", "X output", a <X> placeholder for its
# value, and "HyperPod-<env>-<stack>: X, Y" for what a deployed stack prints. Output names are CamelCase.
CAMEL = r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+"
OUTPUT_MENTIONS = (rf"OutputKey=='({CAMEL})'", rf"[Oo]utputs?,? `({CAMEL})`", rf"`?\b({CAMEL})`? outputs?\b",
                   rf"<({CAMEL})>", r"HyperPod-[a-z<>-]+-(?:network|cluster|governance|batch|teams-\d+): ([^;\n]+)")


def output_mentions(text: str) -> set[str]:
    found = set()
    for pattern in OUTPUT_MENTIONS:
        for match in re.findall(pattern, text):
            found |= {name for name in re.split(r"[,.\s]+", match) if re.fullmatch(CAMEL, name)}
    return found


def test_output_mentions_are_found_as_the_readme_writes_them():
    """The walkthrough once named outputs that never existed (issue 27); each form must be caught."""
    assert output_mentions("#    HyperPod-dev-cluster: KubeconfigCommand; HyperPod-dev-governance: TeamRoleJohn, "
                           "TeamRoleSmith.\n--role-arn <TeamRoleJohn> (the BatchTeamRoleArns output) "
                           "Output `TeamRoleArns` OutputKey=='VpcId'") == {
        "KubeconfigCommand", "TeamRoleJohn", "TeamRoleSmith", "BatchTeamRoleArns", "TeamRoleArns", "VpcId"}
    assert output_mentions("HyperPod-prod-governance: 4 DELETE, 3 update\nCloudFormation's 200-output limit") == set()


@pytest.mark.slow
@pytest.mark.synth
def test_every_output_the_readme_names_is_in_a_shipped_environment(tmp_path_factory):
    """Against the real CLI's synths of config/*.yaml (the ones the stack tests share)."""
    outputs = set()
    for config in sorted((ROOT / "config").glob("*.yaml")):
        for template in env_assembly(tmp_path_factory, config.stem).glob("*.template.json"):
            outputs |= set(json.loads(template.read_text()).get("Outputs", {}))
    named = output_mentions(README)
    assert {"EksClusterName", "KubeconfigCommand", "TeamRoleArns", "BatchTeamRoleArns"} <= named
    assert sorted(named - outputs) == []
