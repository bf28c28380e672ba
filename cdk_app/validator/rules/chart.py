"""The HyperPod dependency Helm chart's pins and components."""

from __future__ import annotations

from cdk_app.config.model import (
    DEFAULT_HELM_CHART_CONTENT_SHA256,
    DEFAULT_HELM_CHART_DEPENDENCIES,
    DEFAULT_HELM_CHART_REVISION,
    HelmChart,
    KitConfig,
)
from cdk_app.config.yaml_source import PathKey
from cdk_app.validator.reporter import Reporter
from hyperpod_constructs.private.kubectl_layers import LAYER_MINORS, layer_minor
from hyperpod_constructs.private.limits import MIN_KUBERNETES_MINOR


def check_helm_chart(config: KitConfig, report: Reporter) -> None:
    hyperpod = config.hyperpod
    chart = hyperpod.helm_chart
    content, dependencies = chart.pins()
    if content is None:
        report.error("HPK208", ("hyperpod", "helm_chart"),
                     f"revision {chart.revision[:12]} is not the kit's default, and nothing pins the chart's content",
                     "set hyperpod.helm_chart.content_sha256 (print it with: hyperpod-kit chart-sha256 --revision ...)")
    if dependencies is None:
        report.error("HPK220", ("hyperpod", "helm_chart"),
                     f"revision {chart.revision[:12]} is not the kit's default, and nothing pins its remote dependencies",
                     "set hyperpod.helm_chart.dependencies (hyperpod-kit chart-sha256 prints them; {} if it has none)")
    if chart.revision == DEFAULT_HELM_CHART_REVISION:
        _check_known_pins(chart, report)
    if chart.revision == DEFAULT_HELM_CHART_REVISION and chart.components.inference_operator:
        report.error("HPK222", ("hyperpod", "helm_chart", "components", "inference_operator"),
                     f"the inference operator of chart {chart.revision[:12]} needs six remote charts of its own "
                     "that the kit cannot pin, so the installer refuses it",
                     "install the inference operator as its EKS add-on, and set inference_operator: false")
    too_old = int(config.eks.kubernetes_version.split(".")[1]) < MIN_KUBERNETES_MINOR  # HPK101 says so already
    if not too_old and layer_minor(config.eks.kubernetes_version) is None:
        report.error("HPK221", ("eks", "kubernetes_version"),
                     f"the kit ships no kubectl/helm layer within one minor version of {config.eks.kubernetes_version}",
                     f"use a version from 1.{LAYER_MINORS[0] - 1} to 1.{LAYER_MINORS[-1] + 1}")
    if hyperpod.node_recovery == "Automatic" and not chart.components.health_monitoring_agent:
        report.error("HPK209", ("hyperpod", "helm_chart", "components", "health_monitoring_agent"),
                     "automatic node recovery acts on the faults the health monitoring agent reports",
                     "enable health_monitoring_agent, or set hyperpod.node_recovery: None")


def _check_known_pins(chart: HelmChart, report: Reporter) -> None:
    """At the kit's default revision the right pins are known: a different one is a typo or a tampered chart."""
    base: PathKey = ("hyperpod", "helm_chart")
    if chart.content_sha256 not in (None, DEFAULT_HELM_CHART_CONTENT_SHA256):
        report.error("HPK223", base + ("content_sha256",),
                     f"revision {chart.revision[:12]}'s chart has content digest {DEFAULT_HELM_CHART_CONTENT_SHA256}",
                     "copy the pins hyperpod-kit chart-sha256 prints, or leave content_sha256 out for the default")
    for name, pin in (chart.dependencies or {}).items():
        known = DEFAULT_HELM_CHART_DEPENDENCIES.get(name)
        if known is not None and (pin.url, pin.sha256) != known:
            report.error("HPK223", base + ("dependencies", name),
                         f"revision {chart.revision[:12]} pins {name} as {known[0]} with SHA-256 {known[1]}",
                         "copy the pins hyperpod-kit chart-sha256 prints, or leave dependencies out for the default")
