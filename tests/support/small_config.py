"""The head of a small environment file that validates without findings of its own (zones and CloudFormation
types recorded): tests append the hyperpod and teams sections they are about."""

HEAD = """environment: t
account: "111122223333"
region: us-east-1
availability_zone_ids: [use1-az4, use1-az6]
network: {cluster_zone_ids: [use1-az4, use1-az6]}
task_governance: {cloudformation_types: {cluster_policy: native, compute_quota: native}}
"""
