"""Fine-grained tests of the HyperPodEksCluster construct."""

from __future__ import annotations

import dataclasses

import jsonschema
import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk.assertions import Match, Template
from support.paths import SUPPORT

from cdk_app.domain.resource_schemas import resource_schema
from hyperpod_constructs.hyperpod_eks_cluster import CORE_ADDONS, HyperPodEksCluster, HyperPodEksClusterProps

PROPS = HyperPodEksClusterProps(
    kubernetes_version="1.33", vpc_id="vpc-0123456789abcdef0",
    subnet_ids=("subnet-0123456789abcdef0", "subnet-0123456789abcdef1"), availability_zone_ids=("use1-az4", "use1-az6"),
    security_group_id="sg-0123456789abcdef0", endpoint_access="public_and_private",
    public_access_cidrs=("203.0.113.0/24",),
    admin_principals=("arn:aws:iam::111122223333:role/Admin", "arn:aws:iam::111122223333:role/Oncall"),
)

CLUSTER_ADMIN_POLICY = {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"},
                                          ":eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"]]}


def template_for(props: HyperPodEksClusterProps) -> Template:
    stack = Stack(App(), "Test", env=Environment(account="111122223333", region="us-east-1"))
    HyperPodEksCluster(stack, "Eks", props=props)
    return Template.from_stack(stack)


@pytest.fixture(scope="module")
def template() -> Template:
    return template_for(PROPS)


def test_cluster_version_auth_mode_logging_and_encryption(template):
    template.resource_count_is("AWS::EKS::Cluster", 1)
    template.has_resource_properties("AWS::EKS::Cluster", {
        "Version": "1.33",
        "AccessConfig": {"AuthenticationMode": "API_AND_CONFIG_MAP"},
        "BootstrapSelfManagedAddons": False,
        "Logging": {"ClusterLogging": {"EnabledTypes": [{"Type": t} for t in
                                                        ("api", "audit", "authenticator", "controllerManager", "scheduler")]}},
        "EncryptionConfig": [{"Provider": {"KeyArn": Match.any_value()}, "Resources": ["secrets"]}],
        "ResourcesVpcConfig": {"EndpointPrivateAccess": True, "EndpointPublicAccess": True,
                               "PublicAccessCidrs": ["203.0.113.0/24"],
                               "SecurityGroupIds": ["sg-0123456789abcdef0"],
                               "SubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]},
    })


def test_secrets_key_rotates_and_is_retained(template):
    template.has_resource("AWS::KMS::Key", {"Properties": {"EnableKeyRotation": True},
                                            "DeletionPolicy": "RetainExceptOnCreate", "UpdateReplacePolicy": "Retain"})


def test_cluster_is_retained_and_core_add_ons_preserved(template):
    """aws_eks_v2 writes AWS::EKS::Cluster itself: the policies must be on that resource."""
    template.has_resource("AWS::EKS::Cluster", {"DeletionPolicy": "RetainExceptOnCreate", "UpdateReplacePolicy": "Retain"})
    for addon in template.find_resources("AWS::EKS::Addon").values():
        assert addon["Properties"]["PreserveOnDelete"] is True, addon["Properties"]["AddonName"]


def test_no_node_groups_and_no_kubectl_lambda(template):
    template.resource_count_is("AWS::EKS::Nodegroup", 0)
    template.resource_count_is("AWS::Lambda::Function", 0)


def test_one_admin_access_entry_per_principal(template):
    template.resource_count_is("AWS::EKS::AccessEntry", 2)
    for principal in PROPS.admin_principals:
        template.has_resource_properties("AWS::EKS::AccessEntry", {
            "PrincipalArn": principal,
            "AccessPolicies": [{"AccessScope": {"Type": "cluster"},
                                "PolicyArn": CLUSTER_ADMIN_POLICY}],
        })


def test_core_addons(template):
    template.resource_count_is("AWS::EKS::Addon", len(CORE_ADDONS))
    for name in ("vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent"):
        template.has_resource_properties("AWS::EKS::Addon", {"AddonName": name})


# CloudFormation's schema of AWS::EKS::Cluster (cfn-lint's copy) is the source of truth for what the endpoint
# settings may be, and documents a missing PublicAccessCidrs as 0.0.0.0/0.
VPC_CONFIG = resource_schema("AWS::EKS::Cluster")["definitions"]["ResourcesVpcConfig"]
SCHEMA_DEFAULT_CIDRS = ["0.0.0.0/0"]
assert "The default value is 0.0.0.0/0" in VPC_CONFIG["properties"]["PublicAccessCidrs"]["description"]


@pytest.mark.parametrize(("access", "cidrs", "reach"), [
    ("private", (), (False, True)),
    ("public_and_private", ("203.0.113.0/24", "198.51.100.7/32"), (True, True)),
    ("public_and_private", ("0.0.0.0/0",), (True, True)),
    ("public", ("0.0.0.0/0",), (True, False)),
])
def test_endpoint_access_is_valid_for_cloudformation_and_reaches_only_the_listed_networks(access, cidrs, reach):
    template = template_for(dataclasses.replace(PROPS, endpoint_access=access, public_access_cidrs=cidrs))
    (cluster,) = template.find_resources("AWS::EKS::Cluster").values()
    vpc_config = cluster["Properties"]["ResourcesVpcConfig"]
    jsonschema.validate(vpc_config, VPC_CONFIG)
    assert (vpc_config["EndpointPublicAccess"], vpc_config["EndpointPrivateAccess"]) == reach
    if reach[0]:
        assert sorted(vpc_config.get("PublicAccessCidrs", SCHEMA_DEFAULT_CIDRS)) == sorted(cidrs)
    else:
        assert "PublicAccessCidrs" not in vpc_config


def test_the_endpoint_is_private_unless_the_props_open_it():
    template = template_for(dataclasses.replace(PROPS, endpoint_access=HyperPodEksClusterProps.endpoint_access,
                                                public_access_cidrs=()))
    template.has_resource_properties("AWS::EKS::Cluster", {
        "ResourcesVpcConfig": {"EndpointPrivateAccess": True, "EndpointPublicAccess": False}})


def test_the_vpc_cni_enforces_network_policies_and_only_it_is_configured(template):
    # A string, as AWS::EKS::Addon takes it; the other core add-ons keep EKS's defaults.
    template.has_resource_properties("AWS::EKS::Addon", {"AddonName": "vpc-cni",
                                                          "ConfigurationValues": '{"enableNetworkPolicy":"true"}'})
    configured = [r["Properties"]["AddonName"] for r in template.find_resources("AWS::EKS::Addon").values()
                  if "ConfigurationValues" in r["Properties"]]
    assert configured == ["vpc-cni"]


def test_a_pinned_vpc_cni_with_network_policies_is_accepted():
    template = template_for(dataclasses.replace(PROPS, addon_versions={"vpc-cni": "v1.14.0-eksbuild.3"}))
    template.has_resource_properties("AWS::EKS::Addon", {"AddonName": "vpc-cni", "AddonVersion": "v1.14.0-eksbuild.3"})


@pytest.mark.parametrize(("change", "message"), [
    ({"kubernetes_version": "1.29"}, "kubernetes_version must be 1.30 or later, got '1.29'"),
    ({"kubernetes_version": "2.0"}, "kubernetes_version must be 1.30 or later"),
    ({"subnet_ids": ("subnet-0123456789abcdef0",), "availability_zone_ids": ("use1-az4",)},
     "at least two availability zones"),
    ({"availability_zone_ids": ("use1-az4",)}, "same length"),
    ({"endpoint_access": "private"}, "public_access_cidrs needs endpoint_access public"),
    ({"public_access_cidrs": ()}, "endpoint_access public_and_private needs public_access_cidrs"),
    ({"endpoint_access": "public", "public_access_cidrs": ()}, "endpoint_access public needs public_access_cidrs"),
    ({"endpoint_access": "public"}, "a public-only endpoint cannot be restricted"),
    ({"addon_versions": {"aws-ebs-csi-driver": "v1"}}, "unknown add-ons \\['aws-ebs-csi-driver'\\]"),
    ({"addon_versions": {"vpc-cni": "v1.13.4-eksbuild.1"}}, "vpc-cni 'v1.13.4-eksbuild.1': network policy enforcement"),
    ({"addon_versions": {"vpc-cni": "latest"}}, "vpc-cni 'latest': network policy enforcement needs v1.14"),
])
def test_bad_props_raise(change, message):
    with pytest.raises(ValueError, match=message):
        HyperPodEksCluster(Stack(App(), "Test"), "Eks", props=dataclasses.replace(PROPS, **change))


# Hostile review 4 F4(b, c): admins that validate accepted and the construct could not build. The construct is
# the oracle: validate refuses (HPK161) exactly the lists whose entries it cannot create side by side.
ADMIN_LISTS = [
    (("arn:aws:iam::111122223333:role/PlatformAdmin",) * 2, True),
    (("arn:aws:iam::111122223333:role/ops-admin", "arn:aws:iam::111122223333:role/ops/admin"), True),
    (("arn:aws:iam::111122223333:user/a-b/c", "arn:aws:iam::111122223333:user/a/b-c"), True),
    (("arn:aws:iam::111122223333:role/ops-admin", "arn:aws:iam::111122223333:role/ops-admin2"), False),
    (("arn:aws:iam::111122223333:role/Admin", "arn:aws:iam::111122223333:user/Admin"), False),
]


@pytest.mark.parametrize("admins,collide", ADMIN_LISTS)
def test_validate_refuses_exactly_the_admins_the_construct_cannot_build(write_config, admins, collide):

    from cdk_app.validator.report import check_file

    try:
        template_for(dataclasses.replace(PROPS, admin_principals=admins))
        built = True
    except RuntimeError as err:
        assert "There is already a Construct with name 'Admin-" in str(err)
        built = False
    assert built is not collide
    base = (SUPPORT / "adversarial" / "base.yaml").read_text()
    listed = "".join(f"    - {arn}\n" for arn in admins)
    report = check_file(write_config(base.replace("    - arn:aws:iam::111122223333:role/PlatformAdmin\n", listed)))
    found = [(f.code, f.path) for f in report.errors]
    assert found == ([("HPK161", "eks.admin_principals[1]")] if collide else []), [f.render() for f in report.errors]


def test_two_arns_of_one_iam_name_in_other_cases_are_refused(write_config):
    # IAM CreateRole/CreateUser (botocore's iam model, RoleName/UserName): "Names are not distinguished by case"
    # and names are unique per account whatever the path: these two ARNs cannot both name an existing role.

    import botocore.session

    from cdk_app.validator.report import check_file

    iam = botocore.session.get_session().get_service_model("iam")
    assert "Names are not distinguished by case" in iam.operation_model("CreateRole").input_shape.members[
        "RoleName"].documentation
    base = (SUPPORT / "adversarial" / "base.yaml").read_text()
    listed = "    - arn:aws:iam::111122223333:role/PlatformAdmin\n    - arn:aws:iam::111122223333:role/team/platformadmin\n"
    report = check_file(write_config(base.replace("    - arn:aws:iam::111122223333:role/PlatformAdmin\n", listed)))
    assert [(f.code, f.path) for f in report.errors] == [("HPK161", "eks.admin_principals[1]")]
    assert "regardless of case and path" in report.errors[0].message
