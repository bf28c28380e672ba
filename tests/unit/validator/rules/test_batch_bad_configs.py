"""Bad-input catalogue of the `batch:` section: each broken config gives its code, at its field path, on
its line (marked `#<` in the edited text). Ranges come from botocore's batch model and cfn-lint's
AWS::Batch::* schemas; instance types from botocore's sagemaker TrainingInstanceType; region data from
cfn-lint's provider files."""

from __future__ import annotations

import pytest
from support.bad_configs import marked_line  # the catalogue's line marker
from support.batch_bad_configs import BASE, CASES, P2_COUNT, edit

from cdk_app.validator.report import check_file

P1 = "    - name: ProdExp1\n"
FAIR_QUEUE = "    - name: fair-q\n      service_environment: g6\n"


def test_base_config_is_clean(write_config):
    assert check_file(write_config(BASE)).findings == []


def test_every_batch_code_has_a_case():
    from cdk_app.findings import CODES

    offline = {c for c in CODES if "HPK701" <= c <= "HPK715"}
    assert offline <= {case[2] for case in CASES}
    assert len({case[0] for case in CASES}) == len(CASES)


@pytest.mark.parametrize(("text", "code", "path", "severity"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_batch_config(write_config, text, code, path, severity):
    report = check_file(write_config(text), "config/test.yaml")
    expected = (code, path, marked_line(text), severity)
    got = [(f.code, f.path, f.line, f.severity.value) for f in report.findings]
    assert expected in got
    assert not report.unreadable
    finding = next(f for f in report.findings if (f.code, f.path) == (code, path))
    assert finding.file == "config/test.yaml" and finding.message and finding.hint
    if severity == "error":
        assert report.exit_code == 1


def test_over_capacity_message_names_unit_sum_limit_and_shares(write_config):
    text = edit(P2_COUNT, "          count: 41\n")
    [error] = [f for f in check_file(write_config(text)).errors if f.code == "HPK710"]
    for part in ("101 instances of ml.p4d.24xlarge", "'p4d' has 100 instances", "ProdExp1 60, ProdExp2 41",
                 "lower the quotas by 1 instance "):
        assert part in error.message + error.hint


def test_misspelt_unit_names_the_nearest_training_type(write_config):
    text = edit("        - unit: ml.p4d.24xlarge\n", "        - unit: ml.p4d.24xlarg\n")
    finding = next(f for f in check_file(write_config(text)).findings if f.code == "HPK704")
    assert "did you mean ml.p4d.24xlarge" in finding.hint


def test_capacity_units_are_botocores_training_instance_types():
    """The validator reads the model file directly (for speed); botocore's own loader must agree."""
    import botocore.session

    from cdk_app.domain.batch_shares import training_instance_types

    model = botocore.session.get_session().get_service_model("sagemaker")
    assert training_instance_types() == frozenset(model.shape_for("TrainingInstanceType").enum)
