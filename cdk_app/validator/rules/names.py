"""Names the kit derives from the config (clusters, bucket, namespaces): their limits and collisions."""

from __future__ import annotations

from cdk_app.config.model import (
    KitConfig,
)
from cdk_app.config.names import (
    MAX_SAGEMAKER_NAME,
    SAGEMAKER_NAME,
    hyperpod_cluster_name,
    lifecycle_bucket_name,
)
from cdk_app.validator.reporter import Reporter
from hyperpod_constructs.private.sagemaker_bucket_name import bucket_name_problem


def check_derived_names(config: KitConfig, report: Reporter) -> None:
    """Names the stacks build from the environment, held to the rules of the resources that carry them (an
    explicit hyperpod.cluster_name is HPK207's). The quota and cluster policy names (<environment>-<team>,
    <environment>-policy) always fit when the environment and team names do (tests/unit/config/test_names.py)."""
    derived = []
    if config.hyperpod.cluster_name is None:
        name = hyperpod_cluster_name(config)
        if not is_sagemaker_name(name):
            derived.append(("HyperPod cluster name (AWS::SageMaker::Cluster ClusterName)", name,
                            "a cluster name is 1-63 letters, digits and hyphens, a letter or digit at both ends"))
    bucket = lifecycle_bucket_name(config)
    why = bucket_name_problem(bucket)
    if why:
        derived.append(("lifecycle-scripts bucket name", bucket, why))
    for what, name, why in derived:
        report.error("HPK160", ("environment",), f"environment {config.environment!r} gives the {what} {name!r}, "
                     f"which is not allowed: {why}",
                     "use an environment name that ends with a letter or digit and has no '--'"
                     + (" (or set hyperpod.cluster_name)" if what.startswith("HyperPod") else ""))


def is_sagemaker_name(name: str) -> bool:
    return len(name) <= MAX_SAGEMAKER_NAME and SAGEMAKER_NAME.fullmatch(name) is not None
