"""Bad batch: sections: a valid base with a batch section, and each case's edit and expected finding."""

from __future__ import annotations

from support.bad_configs import MARK  # the catalogue's line marker

BASE = """\
environment: dev
account: "111122223333"
region: us-east-1
availability_zone_ids: [use1-az4, use1-az6]
network:
  cluster_zone_ids: [use1-az4, use1-az6]
hyperpod:
  instance_groups:
    - name: gpu
      instance_type: ml.g5.12xlarge
      count: 4
      threads_per_core: 2
      deep_health_checks: []  # a schedulable node within the governance stack's wait (HPK214)
task_governance:
  cloudformation_types: {cluster_policy: native, compute_quota: native}
teams:
  - name: john
    quota:
      - instance_type: ml.g5.12xlarge
        count: 4
batch:
  service_environments:
    - name: p4d
      capacity_limits:
        - unit: ml.p4d.24xlarge
          max_capacity: 100
    - name: g6
      capacity_limits:
        - unit: NUM_INSTANCES
          max_capacity: 8
  queues:
    - name: quota-q
      service_environment: p4d
      scheduling: quota_share
      priority: 10
    - name: fair-q
      service_environment: g6
      scheduling: fair_share
      share_decay_seconds: 3600
  teams:
    - name: ProdExp1
      queues: [quota-q]
      quota:
        - instance_type: ml.p4d.24xlarge
          count: 60
      principals: [arn:aws:iam::111122223333:role/P1]
      execution_role_arn: arn:aws:iam::111122223333:role/P1Training
    - name: ProdExp2
      queues: [quota-q]
      quota:
        - instance_type: ml.p4d.24xlarge
          count: 40
    - name: high
      queues: [fair-q]
      share_identifier: HIGHPRI
      weight_factor: 1
    - name: low
      queues: [fair-q]
      share_identifier: LOWPRI
      weight_factor: 5
"""


P2_COUNT = "          count: 40\n"


HIGH = "    - name: high\n"


def edit(old: str, new: str, text: str = BASE) -> str:
    assert text.count(old) == 1, f"edit target not exactly once in BASE: {old!r}"
    return text.replace(old, new)


# (case id, config text, code, field path, severity)
CASES: list[tuple[str, str, str, str, str]] = [
    # Shape (the loader's codes, for batch fields).
    ("queue-key-misspelt", edit("      priority: 10\n", f"      priority: 10\n      schedulng: fifo  {MARK}\n"),
     "HPK010", "batch.queues[0].schedulng", "error"),
    ("queue-without-environment", edit("      service_environment: p4d\n", "").replace(
        "    - name: quota-q\n", f"    - name: quota-q  {MARK}\n"), "HPK011", "batch.queues[0].service_environment", "error"),
    ("capacity-as-text", edit("          max_capacity: 100\n", f'          max_capacity: "100"  {MARK}\n'),
     "HPK012", "batch.service_environments[0].capacity_limits[0].max_capacity", "error"),
    ("weight-factor-zero", edit("      weight_factor: 1\n", f"      weight_factor: 0  {MARK}\n"),
     "HPK013", "batch.teams[2].weight_factor", "error"),
    ("weight-factor-1000", edit("      weight_factor: 5\n", f"      weight_factor: 1000  {MARK}\n"),
     "HPK013", "batch.teams[3].weight_factor", "error"),
    ("share-decay-over-a-week", edit("      share_decay_seconds: 3600\n", f"      share_decay_seconds: 604801  {MARK}\n"),
     "HPK013", "batch.queues[1].share_decay_seconds", "error"),
    ("compute-reservation-100", edit("      share_decay_seconds: 3600\n",
                                     f"      share_decay_seconds: 3600\n      compute_reservation: 100  {MARK}\n"),
     "HPK013", "batch.queues[1].compute_reservation", "error"),
    ("runnable-timeout-below-10-minutes", edit("      priority: 10\n", f"      priority: 10\n      runnable_timeout_seconds: 60  {MARK}\n"),
     "HPK013", "batch.queues[0].runnable_timeout_seconds", "error"),
    ("queue-priority-1001", edit("      priority: 10\n", f"      priority: 1001  {MARK}\n"),
     "HPK013", "batch.queues[0].priority", "error"),
    ("borrow-limit-below-unlimited", edit(P2_COUNT, f"{P2_COUNT}      borrow_limit: -2  {MARK}\n"),
     "HPK013", "batch.teams[1].borrow_limit", "error"),
    ("max-priority-10000", edit("      execution_role_arn: arn:aws:iam::111122223333:role/P1Training\n",
                                "      execution_role_arn: arn:aws:iam::111122223333:role/P1Training\n"
                                f"      max_priority: 10000  {MARK}\n"), "HPK013", "batch.teams[0].max_priority", "error"),
    ("quota-count-zero", edit(P2_COUNT, f"          count: 0  {MARK}\n"), "HPK013", "batch.teams[1].quota[0].count", "error"),
    ("scheduling-misspelt", edit("      scheduling: fair_share\n", f"      scheduling: fairshare  {MARK}\n"),
     "HPK014", "batch.queues[1].scheduling", "error"),
    ("queue-name-with-dot", edit("    - name: quota-q\n", f"    - name: quota.q  {MARK}\n"),
     "HPK015", "batch.queues[0].name", "error"),
    ("queue-name-too-long-for-its-policy", edit("    - name: fair-q\n", f"    - name: {'q' * 117}  {MARK}\n")
     .replace("queues: [fair-q]", f"queues: [{'q' * 117}]"), "HPK015", "batch.queues[1].name", "error"),
    ("execution-role-not-a-role", edit("role/P1Training\n", f"user/P1Training  {MARK}\n"),
     "HPK015", "batch.teams[0].execution_role_arn", "error"),
    # Names and references.
    ("queue-twice", edit("    - name: fair-q\n", f"    - name: quota-q  {MARK}\n").replace("queues: [fair-q]", "queues: [quota-q]"),
     "HPK701", "batch.queues[1].name", "error"),
    ("environment-twice", edit("    - name: g6\n", f"    - name: p4d  {MARK}\n"), "HPK701",
     "batch.service_environments[1].name", "error"),
    ("team-twice", edit("    - name: ProdExp2\n", f"    - name: ProdExp1  {MARK}\n"), "HPK701", "batch.teams[1].name", "error"),
    ("queue-environment-unknown", edit("      service_environment: g6\n", f"      service_environment: g5  {MARK}\n"),
     "HPK702", "batch.queues[1].service_environment", "error"),
    # A NUM_INSTANCES environment may back two queues (AWS recommends not to); a quota-management one may not.
    ("queues-share-environment", edit("      share_decay_seconds: 3600\n", "      share_decay_seconds: 3600\n"
                                      f"    - name: fifo-q\n      service_environment: g6  {MARK}\n"),
     "HPK703", "batch.queues[2].service_environment", "warning"),
    ("queues-share-quota-environment", edit("      service_environment: g6\n", f"      service_environment: p4d  {MARK}\n")
     .replace("      scheduling: fair_share\n      share_decay_seconds: 3600\n", "      scheduling: fifo\n")
     .replace("      share_identifier: HIGHPRI\n      weight_factor: 1\n", "")
     .replace("      share_identifier: LOWPRI\n      weight_factor: 5\n", ""),
     "HPK721", "batch.queues[1].service_environment", "error"),
    # Capacity units.
    ("unit-unknown", edit("        - unit: ml.p4d.24xlarge\n", f"        - unit: ml.p4d.25xlarge  {MARK}\n"),
     "HPK704", "batch.service_environments[0].capacity_limits[0].unit", "error"),
    ("unit-twice", edit("          max_capacity: 8\n", f"          max_capacity: 8\n        - unit: NUM_INSTANCES  {MARK}\n"
                        "          max_capacity: 2\n"), "HPK704", "batch.service_environments[1].capacity_limits[1].unit", "error"),
    ("quota-share-on-num-instances", edit("      service_environment: p4d\n", "      service_environment: g6\n")
     .replace("      service_environment: g6\n      scheduling: fair_share", "      service_environment: p4d\n      scheduling: fair_share")
     .replace("      scheduling: quota_share\n", f"      scheduling: quota_share  {MARK}\n"),
     "HPK705", "batch.queues[0].scheduling", "error"),
    ("num-instances-mixed-with-types", edit("          max_capacity: 100\n", "          max_capacity: 100\n"
                                            "        - unit: NUM_INSTANCES\n          max_capacity: 4\n")
     .replace("    - name: p4d\n      capacity_limits:\n", f"    - name: p4d\n      capacity_limits:  {MARK}\n"),
     "HPK705", "batch.service_environments[0].capacity_limits", "error"),
    # Teams and shares.
    ("team-queue-unknown", edit("      queues: [fair-q]\n      share_identifier: HIGHPRI\n",
                                f"      queues: [fair-q,\n        cpu-q]  {MARK}\n      share_identifier: HIGHPRI\n"),
     "HPK706", "batch.teams[2].queues[1]", "error"),
    ("fair-share-without-identifier", edit("      share_identifier: HIGHPRI\n      weight_factor: 1\n", "")
     .replace(HIGH, f"    - name: high  {MARK}\n"), "HPK707", "batch.teams[2]", "error"),
    ("share-identifier-with-hyphen", edit("      share_identifier: HIGHPRI\n", f"      share_identifier: HIGH-PRI  {MARK}\n"),
     "HPK707", "batch.teams[2].share_identifier", "error"),
    ("share-identifier-twice", edit("      share_identifier: LOWPRI\n", f"      share_identifier: HIGHPRI  {MARK}\n"),
     "HPK708", "batch.teams[3].share_identifier", "error"),
    ("quota-share-team-without-quota", edit("      quota:\n        - instance_type: ml.p4d.24xlarge\n          count: 40\n", "")
     .replace("    - name: ProdExp2\n", f"    - name: ProdExp2  {MARK}\n"), "HPK709", "batch.teams[1]", "error"),
    ("quota-on-unit-the-environment-lacks", edit("        - instance_type: ml.p4d.24xlarge\n          count: 40\n",
                                                 f"        - instance_type: ml.p5.48xlarge  {MARK}\n          count: 40\n"),
     "HPK709", "batch.teams[1].quota[0].instance_type", "error"),
    ("quota-shares-over-capacity", edit("        - instance_type: ml.p4d.24xlarge\n          count: 40\n",
                                        f"        - instance_type: ml.p4d.24xlarge  {MARK}\n          count: 41\n"),
     "HPK710", "batch.teams[1].quota[0]", "error"),
    ("two-quota-queues-over-one-environment",
     edit("      share_decay_seconds: 3600\n", "      share_decay_seconds: 3600\n    - name: quota-q2\n"
          "      service_environment: p4d\n      scheduling: quota_share\n")
     + "    - name: ProdExp3\n      queues: [quota-q2]\n      quota:\n"
     f"        - instance_type: ml.p4d.24xlarge  {MARK}\n          count: 1\n",
     "HPK710", "batch.teams[4].quota[0]", "error"),
    ("decay-on-fifo-queue", edit("      scheduling: fair_share\n      share_decay_seconds: 3600\n",
                                 f"      scheduling: fifo\n      share_decay_seconds: 3600  {MARK}\n")
     .replace("      share_identifier: HIGHPRI\n      weight_factor: 1\n", "")
     .replace("      share_identifier: LOWPRI\n      weight_factor: 5\n", ""),
     "HPK711", "batch.queues[1].share_decay_seconds", "warning"),
    ("weight-without-fair-share-queue", edit(P2_COUNT, f"{P2_COUNT}      weight_factor: 2  {MARK}\n"),
     "HPK711", "batch.teams[1].weight_factor", "warning"),
    ("quota-without-quota-share-queue", edit("      queues: [fair-q]\n      share_identifier: HIGHPRI\n      weight_factor: 1\n",
                                             "      queues: [fair-q]\n      share_identifier: HIGHPRI\n      weight_factor: 1\n"
                                             f"      quota:  {MARK}\n        - instance_type: ml.p4d.24xlarge\n          count: 1\n"),
     "HPK711", "batch.teams[2].quota", "warning"),
    ("borrow-limit-with-dontlend", edit(P2_COUNT, f"{P2_COUNT}      sharing_strategy: DontLend\n      borrow_limit: 50  {MARK}\n"),
     "HPK712", "batch.teams[1].borrow_limit", "error"),
    ("team-on-two-quota-queues", edit("  teams:\n    - name: ProdExp1\n      queues: [quota-q]\n",
                                      f"  teams:\n    - name: ProdExp1\n      queues: [quota-q, quota-q2]  {MARK}\n")
     .replace("      share_decay_seconds: 3600\n", "      share_decay_seconds: 3600\n    - name: quota-q2\n"
              "      service_environment: p5\n      scheduling: quota_share\n")
     .replace("  queues:\n", "    - name: p5\n      capacity_limits:\n        - unit: ml.p5.48xlarge\n"
              "          max_capacity: 4\n  queues:\n"),
     "HPK713", "batch.teams[0].queues", "error"),
    ("principals-without-execution-role", edit(P2_COUNT, f"{P2_COUNT}      principals: [arn:aws:iam::111122223333:role/P2]  {MARK}\n"),
     "HPK714", "batch.teams[1].principals", "error"),
    ("quota-share-not-in-region", edit("region: us-east-1\navailability_zone_ids: [use1-az4, use1-az6]\nnetwork:\n"
                                       "  cluster_zone_ids: [use1-az4, use1-az6]\n",
                                       "region: me-central-1\navailability_zone_ids: [mec1-az1, mec1-az2]\nnetwork:\n"
                                       "  cluster_zone_ids: [mec1-az1, mec1-az2]\n")
     .replace("      scheduling: quota_share\n", f"      scheduling: quota_share  {MARK}\n"),
     "HPK715", "batch.queues[0].scheduling", "error"),
]
