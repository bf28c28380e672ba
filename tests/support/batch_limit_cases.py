"""Batch configs at and past AWS Batch's limits, with the finding each gives."""

from __future__ import annotations

HEAD = 'environment: atk\naccount: "111122223333"\nregion: us-east-1\nbatch:\n'


P4D = "    - {name: p4d, capacity_limits: [{unit: ml.p4d.24xlarge, max_capacity: 100}]}\n"


G6 = "    - {name: g6, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 8}]}\n"


ROLE = "arn:aws:iam::111122223333:role/"


def config(environments: str, queues: str, teams: str = "") -> str:
    return (HEAD + "  service_environments:\n" + environments + "  queues:\n" + queues
            + ("  teams:\n" + teams if teams else ""))


def quota_team(name: str, queue: str = "q", count: int = 1, types: tuple[str, ...] = ("ml.p4d.24xlarge",)) -> str:
    quota = ", ".join(f"{{instance_type: {t}, count: {count}}}" for t in types)
    return f"    - {{name: {name}, queues: [{queue}], quota: [{quota}]}}\n"


QUOTA_QUEUE = "    - {name: q, service_environment: p4d, scheduling: quota_share}\n"


CASES: list[tuple[str, str, set[tuple[str, str, str]]]] = [
    # H1 (c35, c26): one queue per quota-management service environment - an error, not HPK703's advice.
    ("c35-two-quota-queues-one-environment",
     config(P4D, "    - {name: q1, service_environment: p4d, scheduling: quota_share}\n"
                 "    - {name: q2, service_environment: p4d, scheduling: quota_share}\n",
            quota_team("A", "q1", 50) + quota_team("B", "q2", 50)),
     {("HPK721", "batch.queues[1].service_environment", "error")}),
    ("c26-quota-queue-and-fifo-queue-one-environment",
     config(P4D, QUOTA_QUEUE + "    - {name: f, service_environment: p4d}\n", quota_team("A")),
     {("HPK721", "batch.queues[1].service_environment", "error")}),
    ("num-instances-environment-keeps-the-warning",
     config(G6, "    - {name: f1, service_environment: g6}\n    - {name: f2, service_environment: g6}\n"),
     {("HPK703", "batch.queues[1].service_environment", "warning")}),
    # H2 (c23, c24): 20 quota shares per queue, 5 capacity limits per share; exactly at the limit is fine.
    ("c23-21-quota-shares", config(P4D, QUOTA_QUEUE, "".join(quota_team(f"T{i:02}") for i in range(21))),
     {("HPK722", "batch.teams[20].queues[0]", "error")}),
    ("20-quota-shares-are-fine", config(P4D, QUOTA_QUEUE, "".join(quota_team(f"T{i:02}") for i in range(20))), set()),
    ("c24-6-capacity-limits",
     config("    - name: p\n      capacity_limits:\n" + "".join(
         f"        - {{unit: {t}, max_capacity: 10}}\n" for t in ("ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.xlarge",
                                                                  "ml.g5.2xlarge", "ml.g5.4xlarge", "ml.g5.8xlarge")),
            "    - {name: q, service_environment: p, scheduling: quota_share}\n",
            quota_team("A", types=("ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.xlarge", "ml.g5.2xlarge",
                                   "ml.g5.4xlarge", "ml.g5.8xlarge"))),
     {("HPK722", "batch.teams[0].quota[5]", "error")}),
    # M1 (c36): 50 queues and 50 service environments per account and Region.
    ("c36-51-queues-and-environments",
     config("".join(f"    - {{name: e{i:02}, capacity_limits: [{{unit: NUM_INSTANCES, max_capacity: 1}}]}}\n"
                    for i in range(51)),
            "".join(f"    - {{name: q{i:02}, service_environment: e{i:02}}}\n" for i in range(51))),
     {("HPK723", "batch.queues[50]", "error"), ("HPK723", "batch.service_environments[50]", "error")}),
    ("50-queues-and-environments-are-fine",
     config("".join(f"    - {{name: e{i:02}, capacity_limits: [{{unit: NUM_INSTANCES, max_capacity: 1}}]}}\n"
                    for i in range(50)),
            "".join(f"    - {{name: q{i:02}, service_environment: e{i:02}}}\n" for i in range(50))), set()),
    # M4 (c01): a Python `$` accepts a trailing newline; Batch's share identifiers are letters and digits only.
    ("c01-share-identifier-trailing-newline",
     config(G6, "    - {name: fs, service_environment: g6, scheduling: fair_share}\n",
            '    - {name: A, queues: [fs], share_identifier: "AAA\\n"}\n'),
     {("HPK707", "batch.teams[0].share_identifier", "error")}),
    ("c20-team-name-trailing-newline",
     config(G6, "    - {name: f, service_environment: g6}\n", '    - {name: "A\\n", queues: [f]}\n'),
     {("HPK015", "batch.teams[0].name", "error")}),
    ("queue-name-trailing-newline",
     config(G6, '    - {name: "f\\n", service_environment: g6}\n'), {("HPK015", "batch.queues[0].name", "error")}),
    ("execution-role-trailing-newline",
     config(G6, "    - {name: f, service_environment: g6}\n",
            f'    - {{name: A, queues: [f], principals: ["{ROLE}A"], execution_role_arn: "{ROLE}ATrain\\n"}}\n'),
     {("HPK015", "batch.teams[0].execution_role_arn", "error")}),
    # A broken key is reported once: no finding of a rule that reads it (its sibling looks absent otherwise).
    ("misspelt-sharing-strategy-alone",
     config(P4D, QUOTA_QUEUE, "    - {name: A, queues: [q], sharing_strategy: LendAndBorow, borrow_limit: 5, "
                              "quota: [{instance_type: ml.p4d.24xlarge, count: 1}]}\n"),
     {("HPK014", "batch.teams[0].sharing_strategy", "error")}),
    # M5 (c02): one instance type twice in a team's quota.
    ("c02-same-instance-type-twice",
     config(P4D, QUOTA_QUEUE, "    - name: A\n      queues: [q]\n      quota:\n"
                              "        - {instance_type: ml.p4d.24xlarge, count: 10}\n"
                              "        - {instance_type: ml.p4d.24xlarge, count: 20}\n"),
     {("HPK724", "batch.teams[0].quota[1].instance_type", "error")}),
    # M6 (c03, c05, c04): the execution role gets the principal rule (HPK111's implementation), and sharing warns.
    ("c03-execution-role-other-partition-and-account",
     config(G6, "    - {name: f, service_environment: g6}\n",
            f"    - {{name: A, queues: [f], principals: [{ROLE}A], "
            "execution_role_arn: 'arn:aws-cn:iam::999999999999:role/SomeoneElsesTraining'}\n"),
     {("HPK725", "batch.teams[0].execution_role_arn", "error")}),
    ("execution-role-other-account",
     config(G6, "    - {name: f, service_environment: g6}\n",
            f"    - {{name: A, queues: [f], principals: [{ROLE}A], "
            "execution_role_arn: 'arn:aws:iam::999999999999:role/Training'}\n"),
     {("HPK725", "batch.teams[0].execution_role_arn", "error")}),
    ("c05-execution-role-name-65-characters",
     config(G6, "    - {name: f, service_environment: g6}\n",
            f"    - {{name: A, queues: [f], principals: [{ROLE}A], execution_role_arn: '{ROLE}path/{'x' * 65}'}}\n"),
     {("HPK725", "batch.teams[0].execution_role_arn", "error")}),
    ("execution-role-name-64-characters-with-a-path-is-fine",
     config(G6, "    - {name: f, service_environment: g6}\n",
            f"    - {{name: A, queues: [f], principals: [{ROLE}A], execution_role_arn: '{ROLE}path/{'x' * 64}'}}\n"),
     set()),
    ("c04-execution-role-shared",
     config(G6, "    - {name: f, service_environment: g6}\n",
            f"    - {{name: A, queues: [f], principals: [{ROLE}A], execution_role_arn: {ROLE}Shared}}\n"
            f"    - {{name: B, queues: [f], principals: [{ROLE}B], execution_role_arn: {ROLE}Shared}}\n"),
     {("HPK726", "batch.teams[1].execution_role_arn", "warning")}),
    # M8 (c45): enabled: false cannot stop a team on a FIFO or fair-share queue, so it is refused there.
    ("c45-disabled-team-on-fair-share-and-fifo",
     config(G6 + "    - {name: cpu, capacity_limits: [{unit: NUM_INSTANCES, max_capacity: 8}]}\n",
            "    - {name: fs, service_environment: g6, scheduling: fair_share}\n"
            "    - {name: ff, service_environment: cpu}\n",
            f"    - {{name: A, queues: [fs, ff], share_identifier: A1, enabled: false, "
            f"principals: [{ROLE}A], execution_role_arn: {ROLE}ATrain}}\n"),
     {("HPK727", "batch.teams[0].enabled", "error")}),
    ("disabled-team-on-fifo-only",
     config(G6, "    - {name: ff, service_environment: g6}\n", "    - {name: A, queues: [ff], enabled: false}\n"),
     {("HPK727", "batch.teams[0].enabled", "error")}),
    ("disabled-team-on-quota-share-queue-is-fine",
     config(P4D, QUOTA_QUEUE, "    - {name: A, queues: [q], enabled: false, "
                              "quota: [{instance_type: ml.p4d.24xlarge, count: 1}]}\n"), set()),
    # Issue 32 (class 5): a queue twice in a team's queues is one finding of its own, whatever the queue's kind; the
    # repeat is not a second share identifier (HPK708), a second quota-share queue (HPK713) or "1 more" (HPK727).
    ("fifo-queue-listed-twice",
     config(G6, "    - {name: ff, service_environment: g6}\n", "    - {name: A, queues: [ff, ff]}\n"),
     {("HPK729", "batch.teams[0].queues[1]", "error")}),
    ("fair-share-queue-listed-twice",
     config(G6, "    - {name: fs, service_environment: g6, scheduling: fair_share}\n",
            "    - {name: A, queues: [fs, fs], share_identifier: A1}\n"),
     {("HPK729", "batch.teams[0].queues[1]", "error")}),
    ("quota-share-queue-listed-twice",
     config(P4D, QUOTA_QUEUE, "    - {name: A, queues: [q, q], quota: [{instance_type: ml.p4d.24xlarge, count: 1}]}\n"),
     {("HPK729", "batch.teams[0].queues[1]", "error")}),
    ("disabled-team-on-one-fifo-queue-listed-twice",
     config(G6, "    - {name: ff, service_environment: g6}\n", "    - {name: A, queues: [ff, ff], enabled: false}\n"),
     {("HPK727", "batch.teams[0].enabled", "error"), ("HPK729", "batch.teams[0].queues[1]", "error")}),
    # Issue 30: a 60/40 quota on a fair-share queue would deploy as the weights say (here Batch's default: 50/50).
    ("quota-split-on-a-fair-share-queue",
     config(G6, "    - {name: fs, service_environment: g6, scheduling: fair_share}\n",
            "    - {name: A, queues: [fs], share_identifier: A1, quota: [{instance_type: ml.g6.12xlarge, count: 60}]}\n"
            "    - {name: B, queues: [fs], share_identifier: B1, quota: [{instance_type: ml.g6.12xlarge, count: 40}]}\n"),
     {("HPK730", "batch.teams[0].quota", "error"), ("HPK730", "batch.teams[1].quota", "error")}),
]
