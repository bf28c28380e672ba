"""The EC2 instance types that have EFA interfaces at all, as the aws-efa-k8s-device-plugin chart the kit
pins (0.5.20, values.yaml supportedInstanceLabels, taken from AWS's EFA instance-type list) names them: the
plugin runs, and a node advertises vpc.amazonaws.com/efa, on these only. A job asking EFA on another type
stays Pending. tests/unit/cli/test_hostile_tools.py keeps this list equal to the chart's."""

from __future__ import annotations

EFA_INSTANCE_TYPES = frozenset({
    "m5dn.24xlarge", "m5dn.metal", "m5n.24xlarge", "m5n.metal", "m5zn.12xlarge", "m5zn.metal", "m6a.48xlarge",
    "m6a.metal", "m6i.32xlarge", "m6i.metal", "m6id.32xlarge", "m6id.metal", "m6idn.32xlarge", "m6idn.metal",
    "m6in.32xlarge", "m6in.metal", "m7a.48xlarge", "m7a.metal-48xl", "m7g.16xlarge", "m7g.metal", "m7gd.16xlarge",
    "m7i.48xlarge", "m7i.metal-48xl", "m8g.24xlarge", "m8g.48xlarge", "m8g.metal-24xl", "m8g.metal-48xl",
    "m8gd.24xlarge", "m8gd.48xlarge", "m8gd.metal-24xl", "m8gd.metal-48xl", "c5n.9xlarge", "c5n.18xlarge",
    "c5n.metal", "c6a.48xlarge", "c6a.metal", "c6gn.16xlarge", "c6i.32xlarge", "c6i.metal", "c6id.32xlarge",
    "c6id.metal", "c6in.32xlarge", "c6in.metal", "c7a.48xlarge", "c7a.metal-48xl", "c7g.16xlarge", "c7g.metal",
    "c7gn.metal", "c7gd.16xlarge", "c7gn.16xlarge", "c7i.48xlarge", "c7i.metal-48xl", "c8g.24xlarge", "c8g.48xlarge",
    "c8g.metal-24xl", "c8g.metal-48xl", "c8gd.24xlarge", "c8gd.48xlarge", "c8gd.metal-24xl", "c8gd.metal-48xl",
    "i7ie.48xlarge", "i7ie.metal-48xl", "i8g.48xlarge", "r5dn.24xlarge", "r5dn.metal", "r5n.24xlarge", "r5n.metal",
    "r6a.48xlarge", "r6a.metal", "r6i.32xlarge", "r6i.metal", "r6idn.32xlarge", "r6idn.metal", "r6in.32xlarge",
    "r6in.metal", "r6id.32xlarge", "r6id.metal", "r7a.48xlarge", "r7a.metal-48xl", "r7g.16xlarge", "r7g.metal",
    "r7gd.16xlarge", "r7i.48xlarge", "r7i.metal-48xl", "r7iz.32xlarge", "r7iz.metal-32xl", "r8g.24xlarge",
    "r8g.48xlarge", "r8g.metal-24xl", "r8g.metal-48xl", "r8gd.24xlarge", "r8gd.48xlarge", "r8gd.metal-24xl",
    "r8gd.metal-48xl", "x2idn.32xlarge", "x2idn.metal", "x2iedn.32xlarge", "x2iedn.metal", "x2iezn.12xlarge",
    "x2iezn.metal", "x8g.24xlarge", "x8g.48xlarge", "x8g.metal-24xl", "x8g.metal-48xl", "i3en.12xlarge",
    "i3en.24xlarge", "i3en.metal", "i4g.16xlarge", "i4i.32xlarge", "i4i.metal", "im4gn.16xlarge", "dl1.24xlarge",
    "dl2q.24xlarge", "g4dn.8xlarge", "g4dn.12xlarge", "g4dn.16xlarge", "g4dn.metal", "g5.8xlarge", "g5.12xlarge",
    "g5.16xlarge", "g5.24xlarge", "g5.48xlarge", "g6.8xlarge", "g6.12xlarge", "g6.16xlarge", "g6.24xlarge",
    "g6.48xlarge", "g6e.8xlarge", "g6e.12xlarge", "g6e.16xlarge", "g6e.24xlarge", "g6e.48xlarge", "gr6.8xlarge",
    "inf1.24xlarge", "p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge",
    "p5en.48xlarge", "p6-b200.48xlarge", "p6e-gb200.36xlarge", "trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge",
    "trn2u.48xlarge", "trn2-ac.24xlarge", "trn2u-ac.24xlarge", "vt1.24xlarge", "hpc6a.48xlarge", "hpc6id.32xlarge",
    "hpc7a.12xlarge", "hpc7a.24xlarge", "hpc7a.48xlarge", "hpc7a.96xlarge", "hpc7g.4xlarge", "hpc7g.8xlarge",
    "hpc7g.16xlarge",
})


def has_efa(instance_type: str) -> bool:
    """Whether a SageMaker (ml.) or EC2 instance type has EFA interfaces."""
    return instance_type.removeprefix("ml.") in EFA_INSTANCE_TYPES
