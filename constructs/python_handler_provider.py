"""A Python Lambda handler behind CDK's custom resource framework, as the kit's custom resources use
it: its own role with nothing but its log stream, a log group with set retention, and the framework's
cdk-nag findings acknowledged once, here."""

from __future__ import annotations

from dataclasses import dataclass, field

from aws_cdk import Duration, RemovalPolicy, Size, Stack, Tags
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import custom_resources as cr
from constructs import Construct

from hyperpod_constructs.nag_acknowledgements import acknowledge, managed_policy, ref, wildcard_resource
from hyperpod_constructs.private.handler_source import handler_source
from hyperpod_constructs.service_trust import restrict_service_trust, service_principal

# Every function of a provider carries this tag: whoever may invoke one can send it a forged event during an
# update window, so an SCP or permission boundary denies lambda:InvokeFunction on functions with this tag to
# everyone but the deploy role (docs/explanation/guardrails.md, "The kit's functions").
FUNCTION_TAG = ("hyperpod-kit:custom-resource-function", "true")


@dataclass(frozen=True)
class PythonHandlerProviderProps:
    """Props of PythonHandlerProvider.

    handler_dir: folder with index.py defining on_event - required.
    description: what the function does - required.
    shared_modules: modules of constructs/shared_handler/ (e.g. "cfn_anchor") put next to index.py in the
        asset (private/handler_source.py). Default none.
    anchored_to_stack: the handler acts only on requests CloudFormation is making of this construct's own
        stack (cfn_anchor.confirm_own_stack): the asset gets cfn_anchor, the functions that stack's id
        (CFN_ANCHOR_STACK_ID), the role DescribeStackResource and DescribeStacks on that stack alone. Default False.
    timeout: Default 5 minutes (at most 15).
    memory_mib: Default 256.
    ephemeral_storage_mib: /tmp size. Default 512.
    layers: Default none.
    vpc, vpc_subnets, security_groups: run inside a VPC. Default: outside any VPC.
    log_retention: Default one year.
    is_complete: also run index.is_complete through CDK's waiter state machine: on_event only starts the
        work and returns the physical id, so a failure or time-out afterwards still reaches CloudFormation
        with that id (its rollback Delete then runs). Default False.
    is_complete_timeout: Lambda timeout of each is_complete call. Default 1 minute.
    query_interval: how often is_complete is called. Default 10 seconds.
    total_timeout: how long is_complete may keep answering "not yet" before the resource fails. Default 30 minutes.
    """

    handler_dir: str
    description: str
    shared_modules: tuple[str, ...] = ()
    anchored_to_stack: bool = False
    timeout: Duration = field(default_factory=lambda: Duration.minutes(5))
    memory_mib: int = 256
    ephemeral_storage_mib: int = 512
    layers: tuple[lambda_.ILayerVersion, ...] = ()
    vpc: ec2.IVpc | None = None
    vpc_subnets: ec2.SubnetSelection | None = None
    security_groups: tuple[ec2.ISecurityGroup, ...] = ()
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR
    is_complete: bool = False
    is_complete_timeout: Duration = field(default_factory=lambda: Duration.minutes(1))
    query_interval: Duration = field(default_factory=lambda: Duration.seconds(10))
    total_timeout: Duration = field(default_factory=lambda: Duration.minutes(30))


class PythonHandlerProvider(Construct):
    """Function (python3.14, index.on_event), its role and the provider whose service_token resources use."""

    def __init__(self, scope: Construct, construct_id: str, *, props: PythonHandlerProviderProps) -> None:
        super().__init__(scope, construct_id)
        if (props.vpc is None) != (props.vpc_subnets is None):
            raise ValueError("vpc and vpc_subnets must be given together")
        log_group = logs.LogGroup(self, "Logs", retention=props.log_retention, removal_policy=RemovalPolicy.DESTROY)
        self.role = iam.Role(self, "Role", assumed_by=service_principal(self, "lambda.amazonaws.com"),
                             description=props.description)
        self.role.add_to_policy(iam.PolicyStatement(actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                                                    resources=[f"{log_group.log_group_arn}:*"]))
        findings = {wildcard_resource(f"{ref(log_group.node.default_child, 'Arn')}:*"):
                    "Lambda creates its own log streams in the function's log group; ':*' is the stream part"}
        if props.vpc is not None:
            # What Lambda needs to attach the function to the VPC (the managed VPC access policy, spelt out).
            self.role.add_to_policy(iam.PolicyStatement(actions=list(LAMBDA_VPC_ACTIONS), resources=["*"]))
            findings[wildcard_resource("*")] = "Lambda's VPC attachment calls EC2 ENI actions that accept no narrower resource"
        acknowledge(self.role, findings)
        shared = tuple(dict.fromkeys((*props.shared_modules, *(("cfn_anchor",) if props.anchored_to_stack else ()))))
        self.code_dir = handler_source(props.handler_dir, shared)
        self.function = lambda_.Function(
            self, "Function",
            runtime=lambda_.Runtime.PYTHON_3_14, handler="index.on_event",
            code=lambda_.Code.from_asset(self.code_dir, exclude=["__pycache__"]),
            role=self.role, timeout=props.timeout, memory_size=props.memory_mib,
            ephemeral_storage_size=Size.mebibytes(props.ephemeral_storage_mib), layers=list(props.layers),
            vpc=props.vpc, vpc_subnets=props.vpc_subnets, security_groups=list(props.security_groups) or None,
            log_group=log_group, description=props.description,
        )
        waiter: dict = {}
        # The functions that run the handler's code (with is_complete, two), e.g. for environment variables.
        self.functions: tuple[lambda_.Function, ...] = (self.function,)
        if props.is_complete:
            self.functions += (self._complete_function(props, log_group),)
            waiter = {"is_complete_handler": self.functions[1],
                      "query_interval": props.query_interval, "total_timeout": props.total_timeout}
        if props.anchored_to_stack:
            self._anchor_to_stack()
        provider = cr.Provider(self, "Provider", on_event_handler=self.function,
                               log_group=logs.LogGroup(self, "ProviderLogs", retention=props.log_retention,
                                                       removal_policy=RemovalPolicy.DESTROY), **waiter)
        if props.is_complete:
            _acknowledge_waiter(provider, self.function, waiter["is_complete_handler"])
        framework_role = provider.node.find_child("framework-onEvent").role
        acknowledge(framework_role, {
            managed_policy("service-role/AWSLambdaBasicExecutionRole"):
                "CDK's custom resource framework function; the managed policy only lets it write its own logs",
            wildcard_resource(f"{ref(self.function.node.default_child, 'Arn')}:*"):
                "the framework invokes the handler function and its versions; CDK writes this grant",
        })
        self.service_token = provider.service_token
        # The handler's functions and the framework's that invoke them (their ServiceToken).
        Tags.of(self).add(*FUNCTION_TAG, include_resource_types=["AWS::Lambda::Function"])

    def _anchor_to_stack(self) -> None:
        """What cfn_anchor.confirm_own_stack needs: the stack's id (AWS::StackId) and read calls on it only."""
        stack = Stack.of(self)
        for function in self.functions:
            function.add_environment("CFN_ANCHOR_STACK_ID", stack.stack_id)
        self.role.add_to_policy(iam.PolicyStatement(
            actions=["cloudformation:DescribeStackResource", "cloudformation:DescribeStacks"], resources=[stack.stack_id]))

    def _complete_function(self, props: PythonHandlerProviderProps, log_group: logs.ILogGroup) -> lambda_.Function:
        """The same code and role as the handler, entered at index.is_complete."""
        return lambda_.Function(
            self, "CompleteFunction",
            runtime=lambda_.Runtime.PYTHON_3_14, handler="index.is_complete",
            code=lambda_.Code.from_asset(self.code_dir, exclude=["__pycache__"]),
            role=self.role, timeout=props.is_complete_timeout, memory_size=props.memory_mib,
            ephemeral_storage_size=Size.mebibytes(props.ephemeral_storage_mib), layers=list(props.layers),
            vpc=props.vpc, vpc_subnets=props.vpc_subnets, security_groups=list(props.security_groups) or None,
            log_group=log_group, description=f"{props.description} (completion check)",
        )


def _acknowledge_waiter(provider: cr.Provider, *handlers: lambda_.Function) -> None:
    """cdk-nag findings on the parts CDK's provider framework adds for is_complete: its functions may
    invoke the two handlers (and their versions), its state machine the two framework functions."""
    def invoke(functions: tuple) -> dict[str, str]:
        return {wildcard_resource(f"{ref(f.node.default_child, 'Arn')}:*"):
                "CDK's provider framework invokes this function and its versions; CDK writes this grant"
                for f in functions}

    basic = {managed_policy("service-role/AWSLambdaBasicExecutionRole"):
             "CDK's custom resource framework function; the managed policy only lets it write its own logs"}
    acknowledge(provider.node.find_child("framework-onEvent").role, invoke(handlers[1:]))
    for name in ("framework-isComplete", "framework-onTimeout"):
        role = provider.node.find_child(name).role
        acknowledge(role, {**basic, **invoke(handlers)})
    machine = provider.node.find_child("waiter-state-machine")
    restrict_service_trust(machine.node.find_child("Role"))
    acknowledge(machine, {
        **invoke(tuple(provider.node.find_child(n) for n in ("framework-isComplete", "framework-onTimeout"))),
        "AwsSolutions-SF1": "CDK's waiter only calls is_complete until it answers; every answer and failure is "
                            "in the handler's and the framework's log groups",
        "AwsSolutions-SF2": "CDK's provider framework offers no tracing for its waiter; the handler logs each poll",
    })


LAMBDA_VPC_ACTIONS = (
    "ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets",
    "ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses",
)
