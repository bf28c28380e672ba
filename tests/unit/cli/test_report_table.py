"""The validate report as text: the line under the capacity table where a type's nodes have half the vCPU
SageMaker counts (threads_per_core 1 on a type with two threads per core, EC2's CPU options)."""

from __future__ import annotations

from support.paths import ROOT, SUPPORT

from cdk_app.cli.report_table import render_table
from cdk_app.validator.report import check_file

BASE = (SUPPORT / "adversarial" / "base.yaml").read_text()
NOTE = "hyper-threading off (threads_per_core 1): a node offers half the vCPU SageMaker counts"


def test_the_note_names_each_halved_type_with_its_node_and_type_vcpu():
    report = check_file(ROOT / "config" / "prod.yaml")
    lines = render_table(report).splitlines()
    note = next(line for line in lines if NOTE in line)
    assert "(ml.m7i.4xlarge 8 of 16, ml.p5.48xlarge 96 of 192 per node)" in note
    # Right under the capacity table, whose vCPU column keeps SageMaker's full count.
    assert lines[lines.index(note) - 1].startswith("  ml.p5.48xlarge  10/10  80/80         1920/1920")


def test_no_note_when_every_node_has_its_types_vcpu(write_config):
    text = BASE.replace("    - name: cpu\n", "    - name: cpu\n      threads_per_core: 2\n", 1)
    assert "threads_per_core: 2\n      instance_type: ml.m5.2xlarge" in text
    report = check_file(write_config(text))
    assert [row.node_vcpu for row in report.capacity] == [48, 8]
    assert NOTE not in render_table(report)

