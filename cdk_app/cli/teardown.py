"""`hyperpod-kit teardown CONFIG`: the ordered runbook that takes an environment down completely, with the
environment's real names, and what stays on purpose.

Print-only: every step ends running work or deletes state, so an admin runs each command and reads its
result before the next. The order is what the retention needs: CloudFormation keeps the HyperPod and EKS
clusters (and the network they run on) when their stacks are deleted, so the clusters are deleted through
their APIs first; only then is the network released for deletion (`-c teardown=<env>`, a deploy that changes
DeletionPolicy and nothing else) and its stack destroyed. tests/unit/cli/test_teardown.py checks every `aws`
command against botocore's models and tests/stacks/test_teardown.py the names against a synthesized app.
"""

from __future__ import annotations

import shlex
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import click

from cdk_app.config.loader import ConfigInvalid, load_config
from cdk_app.config.model import KitConfig
from cdk_app.config.names import hyperpod_cluster_name, lifecycle_bucket_name
from cdk_app.stacks.layout import BATCH, CLUSTER, GOVERNANCE, NETWORK, STORAGE, stack_name, team_layout

CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"
# Outputs of the network and cluster stacks (tests/stacks/test_teardown.py holds them to the synth).
EKS_NAME_OUTPUT = "EksClusterName"
SECURITY_GROUP_OUTPUT = "NodeSecurityGroupId"


@dataclass(frozen=True)
class Step:
    title: str
    why: str
    commands: tuple[str, ...] = ()


def _stack_output(stack: str, key: str, region: str) -> str:
    return (f"aws cloudformation describe-stacks --stack-name {stack} --region {region} "
            f"--query \"Stacks[0].Outputs[?OutputKey=='{key}'].OutputValue\" --output text")


def _stack_resource(stack: str, resource_type: str, region: str) -> str:
    return (f"aws cloudformation list-stack-resources --stack-name {stack} --region {region} "
            f"--query \"StackResourceSummaries[?ResourceType=='{resource_type}'].PhysicalResourceId\" --output text")


def _unprotect_and_destroy(stack: str, region: str, context: str) -> tuple[str, ...]:
    """Termination protection is turned off on purpose, for this one stack, right before its destroy."""
    return (f"aws cloudformation update-termination-protection --stack-name {stack} "
            f"--no-enable-termination-protection --region {region}",
            f"npx cdk destroy {context} {stack}")


def cdk_context(config: KitConfig, config_path: Path) -> str:
    """`-c env=<env>`, plus `-c config=<file>` unless the file is config/<env>.yaml (app.py's default)."""
    context = f"-c env={config.environment}"
    if config_path.resolve() != (CONFIG_DIR / f"{config.environment}.yaml").resolve():
        context += f" -c config={shlex.quote(str(config_path))}"
    return context


def runbook(config: KitConfig, config_path: Path) -> list[Step]:
    region, cdk = config.region, cdk_context(config, config_path)
    steps = _hyperpod_steps(config, region, cdk) if config.hyperpod is not None else []
    if config.batch is not None:
        batch = stack_name(config, BATCH)
        steps.append(Step(
            f"Drain and delete the Batch stack {batch}",
            "Deleting a job queue ends the jobs queued and running in it: let the queues empty (or cancel their "
            "jobs) first. The stack keeps nothing.",
            _unprotect_and_destroy(batch, region, cdk)))
    steps.append(_kept(config, region))
    return steps


def _hyperpod_steps(config: KitConfig, region: str, cdk: str) -> list[Step]:
    network, cluster = stack_name(config, NETWORK), stack_name(config, CLUSTER)
    hyperpod = hyperpod_cluster_name(config)
    layout = team_layout(config)
    own_vpc = config.network.existing_vpc_id is None
    record = [f"EKS=$({_stack_output(cluster, EKS_NAME_OUTPUT, region)})",
              f"SG=$({_stack_output(network, SECURITY_GROUP_OUTPUT, region)})",
              f"KEY=$({_stack_resource(cluster, 'AWS::KMS::Key', region)})"]
    if own_vpc:
        record.append(f"FLOW_LOGS=$({_stack_resource(network, 'AWS::Logs::LogGroup', region)})")
    storage = [] if config.storage is None else [_storage_step(config, region, cdk)]
    if config.storage is not None:
        record.append(f"FILE_SYSTEMS=$({_stack_resource(stack_name(config, STORAGE), 'AWS::FSx::FileSystem', region)})")
    team_stacks = [stack_name(config, name) for name in layout.team_stacks]
    return [
        Step("Record the names the later steps need (their stacks are gone by then)",
             "The EKS cluster's name is generated; the key and log group are kept after their stacks go.",
             tuple(record)),
        Step("Drain the cluster",
             "Tell the teams and let their jobs finish or stop them; copy out what they keep on the cluster.",
             (f"aws eks update-kubeconfig --name \"$EKS\" --region {region}", "kubectl get workloads -A")),
        Step("Delete the team and governance stacks",
             "Team quotas, the cluster policy, RBAC, admission guardrails, team access entries and roles and the "
             "observability add-on go. The task-governance add-on is preserved on delete: Kueue keeps running, "
             "without queues, until the EKS cluster is deleted below.",
             tuple(f"npx cdk destroy {cdk} {stack}" for stack in [*team_stacks, stack_name(config, GOVERNANCE)])),
        *storage,
        Step(f"Delete the HyperPod cluster {hyperpod} and wait until it is gone",
             "Its stack keeps it (RetainExceptOnCreate), so only this stops it billing. Every running job ends. "
             "The loop prints the status every minute until describe-cluster answers that the cluster does not "
             "exist (ResourceNotFound); it stops on Failed (read FailureMessage, fix, delete again) and keeps "
             "polling through throttling or an expired session, which only print their error.",
             (f"aws sagemaker delete-cluster --cluster-name {hyperpod} --region {region}",
              f"while true; do s=$(aws sagemaker describe-cluster --cluster-name {hyperpod} --region {region} "
              "--query ClusterStatus --output text 2>&1); echo \"$s\"; case \"$s\" in *ResourceNotFound*) break;; "
              "Failed) break;; esac; sleep 60; done")),
        Step("Delete the EKS cluster and wait until it is gone",
             "Kept by its stack as well; its add-ons (Kueue included) and access entries go with it.",
             (f"aws eks delete-cluster --name \"$EKS\" --region {region}",
              f"aws eks wait cluster-deleted --name \"$EKS\" --region {region}")),
        Step(f"Delete the cluster stack {cluster}",
             "Removes the execution role, the chart installer and the access entries; keeps the secrets key and "
             "the lifecycle bucket (see the last step).",
             _unprotect_and_destroy(cluster, region, cdk)),
        Step(f"Release and delete the network stack {network}",
             "By default a delete of this stack keeps the VPC, subnets, NAT gateways and addresses, routes and the "
             "node security group: deleting it under a running cluster must cut nothing. Check first that no "
             "network interface uses the security group any more (the command prints nothing; the EKS control "
             "plane's and the chart installer's take some minutes to go). The teardown deploy changes only "
             "DeletionPolicy (compare with cdk diff), so the destroy then removes the network"
             + (" - and releases the NAT addresses: systems that allow-listed them must drop them."
                if own_vpc else "; the VPC and subnets are yours (existing_vpc_id) and stay."),
             (f"aws ec2 describe-network-interfaces --filters Name=group-id,Values=\"$SG\" --region {region} "
              "--query \"NetworkInterfaces[].[NetworkInterfaceId,Description]\" --output text",
              f"npx cdk diff {cdk} -c teardown={config.environment} {network}",
              f"npx cdk deploy {cdk} -c teardown={config.environment} {network}",
              *_unprotect_and_destroy(network, region, cdk))),
    ]


def _storage_step(config: KitConfig, region: str, cdk: str) -> Step:
    storage = stack_name(config, STORAGE)
    return Step(
        f"Delete the storage stack {storage}",
        "The teams' volumes go (their claims went with the team stacks) and the FSx CSI driver add-on is preserved "
        "until the EKS cluster goes. The file systems are kept with their data (RetainExceptOnCreate), and their S3 "
        "links go: what an association exported is in S3; anything written since its last export, and everything "
        "outside the linked directories, is only on the file system. The last step deletes them.",
        _unprotect_and_destroy(storage, region, cdk))


def _kept(config: KitConfig, region: str) -> Step:
    if config.hyperpod is None:
        return Step("What is kept", "Nothing: the Batch stack keeps no resource. The CDK bootstrap stack (CDKToolkit) "
                    "is shared by every CDK app in the account and region and stays.")
    bucket = lifecycle_bucket_name(config)
    versions = (f"$(aws s3api list-object-versions --bucket {bucket} --region {region} --query "
                "'{{Objects: {0}[].{{Key: Key, VersionId: VersionId}}}}' --output json)")
    commands = [
        f"aws s3api delete-bucket-policy --bucket {bucket} --region {region}",
        *(f"aws s3api delete-objects --bucket {bucket} --region {region} --delete \"{versions.format(kind)}\""
          for kind in ("Versions", "DeleteMarkers")),
        f"aws s3api delete-bucket --bucket {bucket} --region {region}",
        f"aws kms schedule-key-deletion --key-id \"$KEY\" --pending-window-in-days 30 --region {region}",
        f"aws logs delete-log-group --log-group-name \"/aws/eks/$EKS/cluster\" --region {region}",
        f"aws logs describe-log-groups --log-group-name-prefix /aws/sagemaker/Clusters/{hyperpod_cluster_name(config)}/ "
        f"--region {region} --query \"logGroups[].logGroupName\" --output text",
    ]
    if config.network.existing_vpc_id is None:
        commands.append(f"aws logs delete-log-group --log-group-name \"$FLOW_LOGS\" --region {region}")
    file_systems = ""
    if config.storage is not None:
        # A persistent file system takes a final backup unless told not to (kept, and billed, until deleted).
        commands.append(f"for fs in $FILE_SYSTEMS; do aws fsx delete-file-system --file-system-id \"$fs\" "
                        f"--region {region}; done")
        file_systems = ("The FSx for Lustre file systems hold the teams' checkpoints and data: copy out what is "
                        "needed (an export data repository task, or any client) before deleting them; a persistent "
                        "one leaves a final backup, kept and billed until you delete it (aws fsx delete-backup). ")
    return Step(
        "What is kept on purpose, and how to delete it if you want to",
        f"The lifecycle bucket {bucket} holds the scripts every node ran, with their earlier versions: the record "
        "of how the nodes were set up (its policy lets only the deleted copy function write, so the policy goes "
        "first; a delete-objects call takes up to 1000 versions, repeat it until the bucket is empty). The "
        "Kubernetes secrets key is kept because a deleted key cannot come back: KMS waits 7 to 30 days before "
        "deleting it, and cancel-key-deletion stops that. The log groups - EKS control plane, HyperPod node "
        "logs and deep health checks (delete each name the describe command prints), VPC flow logs - keep what "
        "an investigation after the fact needs; delete them once nobody does. " + file_systems + "The CDK "
        "bootstrap stack (CDKToolkit) is shared by every CDK app in the account and region and stays.",
        tuple(commands))


def render(config: KitConfig, steps: list[Step]) -> str:
    """Shell syntax, prose as comments: read it step by step and run each command on purpose, not as a script."""
    lines = [f"# Teardown of environment {config.environment} (account {config.account}, {config.region}).",
             *(f"# {line}" for line in _wrapped(warning(config))),
             "# Run each step by hand, in this order, and read its result before the next; not as a script."]
    for number, step in enumerate(steps, 1):
        lines += ["", f"# {number}. {step.title}", *(f"#    {line}" for line in _wrapped(step.why)), *step.commands]
    return "\n".join(lines) + "\n"


def warning(config: KitConfig) -> str:
    ends = []
    if config.hyperpod is not None:
        ends.append("deleting the HyperPod cluster ends every job running on it and terminates its nodes (with what "
                    "is on their disks); deleting the governance stack takes every team's quota and queue")
    if config.batch is not None:
        ends.append("deleting the Batch stack ends every job queued or running in its queues")
    return f"WARNING: {'; '.join(ends)}. None of it can be undone."


def _wrapped(text: str, width: int = 110) -> list[str]:
    return textwrap.wrap(text, width) or [""]


@click.command("teardown")
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False, path_type=Path))
def teardown(config_path: Path) -> None:
    """Print the ordered runbook that takes CONFIG's environment down completely, and what it keeps and why.

    Print-only: nothing is deleted. Exit status: 0 printed, 2 CONFIG could not be read (or bad usage),
    3 internal error.
    """
    try:
        config = load_config(config_path, str(config_path)).config
    except ConfigInvalid as err:
        for finding in err.findings:
            click.echo(finding.render(), err=True)
        click.echo(f"{config_path}: the names of its stacks and clusters come from the config; fix it first", err=True)
        sys.exit(2)
    click.echo(render(config, runbook(config, config_path)), nl=False)
