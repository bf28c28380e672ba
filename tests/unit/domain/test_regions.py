"""The region checks against cfn-lint's own region data, read here straight from its files: HPK210 for an
instance type HyperPod does not offer in the region (schemas/extensions/aws_sagemaker_cluster/
instancetype_enum.json), and a clear internal error (exit 3) when
cfn-lint itself is missing (it is a dependency of the kit: pyproject.toml)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import cfnlint
from click.testing import CliRunner
from support.paths import SUPPORT

from cdk_app.cli.main import main
from cdk_app.validator.report import check_file

BASE = (SUPPORT / "adversarial" / "base.yaml").read_text()
CFNLINT_DATA = Path(cfnlint.__file__).parent / "data" / "schemas"
OFFERED = {region: set(entry["enum"]) for region, entry in json.loads(
    (CFNLINT_DATA / "extensions" / "aws_sagemaker_cluster" / "instancetype_enum.json").read_text()).items()
    if isinstance(entry, dict)}
EVERYWHERE = set().union(*OFFERED.values())


def edited(write_config, old: str, new: str) -> Path:
    assert old in BASE
    return write_config(BASE.replace(old, new, 1))


def findings(path: Path) -> list[tuple[str, str]]:
    return sorted((f.code, f.path) for f in check_file(path).findings)


def _missing_in_us_east_1(family_offered: bool) -> str:
    """A HyperPod type some region offers but us-east-1 does not, whose family us-east-1 has (or lacks)."""
    here = OFFERED["us-east-1"]
    return next(t for t in sorted(EVERYWHERE - here)
                if any(o.startswith(t.rsplit(".", 1)[0] + ".") for o in here) == family_offered)


def test_a_type_not_offered_in_the_region_names_the_family_sizes_there(write_config):
    itype = _missing_in_us_east_1(family_offered=True)
    family = itype.rsplit(".", 1)[0] + "."
    sizes = sorted(t for t in OFFERED["us-east-1"] if t.startswith(family))
    path = edited(write_config, "      instance_type: ml.m5.2xlarge\n      count: 2\n",
                  f"      instance_type: {itype}\n      count: 2\n")
    report = check_file(path)
    hpk210 = [f for f in report.findings if f.code == "HPK210"]
    assert [(f.path, f.message, f.hint) for f in hpk210] == [
        ("hyperpod.instance_groups[1].instance_type", f"{itype} is not offered by HyperPod in us-east-1",
         f"sizes of this family there: {', '.join(sizes)}")]
    assert report.exit_code == 1


def test_a_family_the_region_lacks_says_so(write_config):
    itype = _missing_in_us_east_1(family_offered=False)
    family = itype.rsplit(".", 1)[0] + "."
    path = edited(write_config, "      instance_type: ml.m5.2xlarge\n      count: 2\n",
                  f"      instance_type: {itype}\n      count: 2\n")
    [hpk210] = [f for f in check_file(path).findings if f.code == "HPK210"]
    assert hpk210.hint == f"no {family}* sizes in us-east-1; pick another family or region"


def test_every_offered_type_of_the_base_passes_in_its_region(write_config):
    # The base's two types are offered in us-east-1 per cfn-lint: no HPK210.
    assert {"ml.g5.12xlarge", "ml.m5.2xlarge"} <= OFFERED["us-east-1"]
    assert check_file(write_config(BASE)).findings == []


def test_validate_without_cfn_lint_is_an_internal_error_naming_it(write_config, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "cfnlint" else real(name, *a))
    result = CliRunner().invoke(main, ["validate", str(write_config(BASE))])
    assert result.exit_code == 3
    assert ("internal error (RuntimeError: cfn-lint is not installed; it is a dependency of hyperpod-kit "
            "(run make setup))") in result.output


def test_a_fallback_type_not_offered_in_the_region_is_located(write_config):
    itype = _missing_in_us_east_1(family_offered=True)
    path = edited(write_config, "      instance_type: ml.m5.2xlarge\n      count: 2\n",
                  f"      instance_type: ml.m5.2xlarge\n      fallback_instance_types: [ml.m5.4xlarge, {itype}]\n"
                  "      count: 2\n")
    assert [(f.code, f.path) for f in check_file(path).findings if f.code == "HPK210"] == [
        ("HPK210", "hyperpod.instance_groups[1].fallback_instance_types[1]")]
