"""`hyperpod-kit plan`: what a deploy will do, in an admin's words, computed from two sets of synthesized
templates - a baseline (a saved cdk.out, a git ref's synth, or the templates deployed in the account) and
the current config's synth.

Offline and deterministic: the comparison is the kit's own, on template JSON. Replacement is decided from
CloudFormation's resource schemas (createOnlyProperties in cfn-lint's copy, cdk_app.domain.resource_schemas), not
from a list kept here; the API-backed governance resources (Custom::SageMaker<Kind>) use the schema of the
type they stand in for, as their handler does. A resource whose create-only property refers to a replaced
resource (Ref, GetAtt, or an import of another stack's export of it) is replaced too.

Verdict: a replacement or removal of a stateful resource is refused unless named with --allow-replace
<logical id>. Stateful: cfn-lint's list (buckets, keys, log groups, ...) plus what losing would lose the
fleet: the HyperPod and EKS clusters, their add-ons, the VPC and its subnets, and the Batch queues and
shares that hold submitted jobs. Refused the same way ("hazards"): in-place updates that destroy nodes
(an instance group removed, or its type, threads, zone or training plan changed: <logical id>/<group>),
a compute quota or the cluster policy replaced (running jobs lose their guarantee), a DeletionPolicy or
UpdateReplacePolicy dropped from a stateful resource, termination protection turned off (<stack name>).
Never allowed, because the deploy fails: a replacement that keeps a fixed name (CloudFormation creates the
new resource before deleting the old one), a resource type changed under the same logical id, and a
resource added under a new logical id with the name (or, for an access entry, the principal) of one the
same stack deletes.

The parts: model (what a plan holds), sources (where each side comes from), compare, hazards and teams (what
changes), render (the admin's words). This module is the command's interface.
"""

from cdk_app.cli.plan.compare import compare
from cdk_app.cli.plan.model import REMOVAL_DOC, STACK_REMOVAL_DOC, Plan, PlanInputError
from cdk_app.cli.plan.render import render
from cdk_app.cli.plan.sources import (
    check_account,
    check_digest,
    deployed_protection,
    deployed_templates,
    environment_stacks,
    read_templates,
    resolve_ref,
    synthesize,
    synthesize_ref,
    termination_protection,
)
from cdk_app.stacks.stamp import DIGEST_KEY, config_digest

__all__ = ["DIGEST_KEY", "REMOVAL_DOC", "STACK_REMOVAL_DOC", "Plan", "PlanInputError", "check_account", "check_digest",
           "compare", "config_digest", "deployed_protection", "deployed_templates", "environment_stacks",
           "read_templates", "render", "resolve_ref", "synthesize", "synthesize_ref", "termination_protection"]
