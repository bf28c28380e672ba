"""What each region offers, read from the data cfn-lint ships (its pricing-derived instance type lists),
so the validator and cfn-lint agree and nothing is kept by hand. cfn-lint itself is not imported:
only its data file is read, which keeps `validate` fast."""

from __future__ import annotations

import importlib.util
import json
from functools import lru_cache
from pathlib import Path


def _cfnlint_data() -> Path:
    spec = importlib.util.find_spec("cfnlint")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("cfn-lint is not installed; it is a dependency of hyperpod-kit (run make setup)")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


@lru_cache(maxsize=1)
def _cluster_instance_types() -> dict[str, frozenset[str]]:
    path = _cfnlint_data() / "schemas" / "extensions" / "aws_sagemaker_cluster" / "instancetype_enum.json"
    data = json.loads(path.read_text())
    return {region: frozenset(entry["enum"]) for region, entry in data.items() if isinstance(entry, dict)}


def hyperpod_instance_types(region: str) -> frozenset[str] | None:
    """HyperPod instance types offered in `region`, or None when cfn-lint has no list for it."""
    return _cluster_instance_types().get(region)


@lru_cache(maxsize=None)
def cloudformation_types(region: str) -> frozenset[str]:
    """Resource types CloudFormation offers in `region` (cfn-lint's provider data); empty if unknown."""
    path = _cfnlint_data() / "schemas" / "providers" / f"{region}.json"
    if not path.is_file():
        return frozenset()
    return frozenset(json.loads(path.read_text()))
