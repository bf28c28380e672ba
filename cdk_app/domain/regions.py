"""What each region offers, read from the data cfn-lint ships (its pricing-derived instance type lists),
so the validator and cfn-lint agree and nothing is kept by hand. cfn-lint itself is not imported:
only its data file is read, which keeps `validate` fast."""

from __future__ import annotations

import difflib
import importlib.util
import json
from functools import cache, lru_cache
from pathlib import Path

from cdk_app.config.zone_ids import is_region_name


def cfnlint_data() -> Path:
    spec = importlib.util.find_spec("cfnlint")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("cfn-lint is not installed; it is a dependency of hyperpod-kit (run make setup)")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


@lru_cache(maxsize=1)
def _cluster_instance_types() -> dict[str, frozenset[str]]:
    path = cfnlint_data() / "schemas" / "extensions" / "aws_sagemaker_cluster" / "instancetype_enum.json"
    data = json.loads(path.read_text())
    return {region: frozenset(entry["enum"]) for region, entry in data.items() if isinstance(entry, dict)}


def hyperpod_instance_types(region: str) -> frozenset[str] | None:
    """HyperPod instance types offered in `region`, or None when cfn-lint has no list for it."""
    return _cluster_instance_types().get(region)


@cache
def cloudformation_types(region: str) -> frozenset[str]:
    """Resource types CloudFormation offers in `region` (cfn-lint's provider data); empty if unknown."""
    path = _provider_file(region)
    if path is None:
        return frozenset()
    return frozenset(json.loads(path.read_text()))


def _provider_file(region: str) -> Path | None:
    # Only a plain region name (the config's pattern) becomes part of a path: the commands also take a region
    # from their own options, where "../x" or 300 characters must read as unknown, not as a path.
    if not is_region_name(region):
        return None
    path = cfnlint_data() / "schemas" / "providers" / f"{region}.json"
    return path if path.is_file() else None


def known_regions() -> list[str]:
    """Regions cfn-lint has provider data for (names only; no file is read)."""
    folder = cfnlint_data() / "schemas" / "providers"
    return sorted(p.stem for p in folder.glob("*.json") if "-" in p.stem)


HYPERPOD_RESOURCE = "AWS::SageMaker::Cluster"


def region_problem(region: str) -> str | None:
    """Why `region` cannot hold the kit's HyperPod cluster according to cfn-lint's region data, or None."""
    if _provider_file(region) is None:
        return "unknown"
    if HYPERPOD_RESOURCE not in cloudformation_types(region):
        return "no-hyperpod"
    return None


def nearest_region(region: str) -> str | None:
    """The known region a mistyped name most likely meant, or None."""
    near = difflib.get_close_matches(region, known_regions(), n=1, cutoff=0.8)
    return near[0] if near else None


def zone_names(region: str) -> tuple[str, ...]:
    """The availability zones cfn-lint's region data lists for `region`, by name (us-east-1a, ...); none when it
    has no list. Zone names map to zone ids differently in every account; how many there are does not."""
    from cfnlint.helpers import AVAILABILITY_ZONES  # cfn-lint's own table; imported only when asked (slow)

    return tuple(AVAILABILITY_ZONES.get(region) or ())
