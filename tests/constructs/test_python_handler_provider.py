"""PythonHandlerProvider: shared handler modules travel in each asset, and an anchored handler may confirm
events with its own stack only."""

from __future__ import annotations

from pathlib import Path

import pytest
from aws_cdk import App, Stack
from aws_cdk.assertions import Template

from hyperpod_constructs.private.handler_source import SHARED_DIR, handler_source
from hyperpod_constructs.python_handler_provider import FUNCTION_TAG, PythonHandlerProvider, PythonHandlerProviderProps

CONSTRUCTS = Path(__file__).resolve().parents[2] / "constructs"


@pytest.fixture(scope="module")
def anchored():
    stack = Stack(App(), "HyperPod-dev-governance")
    provider = PythonHandlerProvider(stack, "Api", props=PythonHandlerProviderProps(
        handler_dir=str(CONSTRUCTS / "sagemaker_governance_handler"), description="test", is_complete=True,
        anchored_to_stack=True))
    return provider, Template.from_stack(stack)


def test_both_functions_know_their_stack_and_the_role_reads_that_stack_alone(anchored):
    """cfn_anchor.confirm_own_stack reads CFN_ANCHOR_STACK_ID; on_event and is_complete both confirm."""
    provider, template = anchored
    handlers = [f for f in template.find_resources("AWS::Lambda::Function").values()
                if f["Properties"].get("Handler", "").startswith("index.")]
    assert sorted(f["Properties"]["Handler"] for f in handlers) == ["index.is_complete", "index.on_event"]
    assert all(f["Properties"]["Environment"]["Variables"] == {"CFN_ANCHOR_STACK_ID": {"Ref": "AWS::StackId"}}
               for f in handlers)
    statements = [s for p in template.find_resources("AWS::IAM::Policy").values()
                  for s in p["Properties"]["PolicyDocument"]["Statement"]
                  if any(a.startswith("cloudformation:") for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"]))]
    assert statements == [{"Action": ["cloudformation:DescribeStackResource", "cloudformation:DescribeStacks"],
                           "Effect": "Allow", "Resource": {"Ref": "AWS::StackId"}}]


def test_the_asset_holds_the_handler_and_the_one_shared_copy_of_cfn_anchor(anchored):
    provider, _ = anchored
    staged = Path(provider.code_dir)
    handler = CONSTRUCTS / "sagemaker_governance_handler"
    assert sorted(p.name for p in staged.iterdir()) == sorted(["cfn_anchor.py", *(p.name for p in handler.glob("*.py"))])
    assert (staged / "cfn_anchor.py").read_bytes() == (SHARED_DIR / "cfn_anchor.py").read_bytes()
    assert (staged / "index.py").read_bytes() == (handler / "index.py").read_bytes()
    # Staged by content: the same handler gives the same folder (and asset hash) on every synth.
    assert handler_source(str(handler), ("cfn_anchor",)) == str(staged)


def test_the_installer_ships_the_same_cfn_anchor_and_has_no_copy_of_its_own():
    staged = Path(handler_source(str(CONSTRUCTS / "helm_release_handler"), ("cfn_anchor",)))
    assert (staged / "cfn_anchor.py").read_bytes() == (SHARED_DIR / "cfn_anchor.py").read_bytes()
    assert [p for p in CONSTRUCTS.glob("*_handler/cfn_anchor.py") if p.parent != SHARED_DIR] == []


def test_a_handler_with_its_own_copy_of_a_shared_module_is_refused(tmp_path):
    (tmp_path / "index.py").write_text("")
    (tmp_path / "cfn_anchor.py").write_text("")
    with pytest.raises(ValueError, match="has its own cfn_anchor.py; a shared module must have one copy"):
        handler_source(str(tmp_path), ("cfn_anchor",))
    with pytest.raises(ValueError, match="shared module 'nope' is not in"):
        handler_source(str(tmp_path), ("nope",))


def test_without_shared_modules_the_folder_is_used_as_it_is(tmp_path):
    assert handler_source(str(tmp_path), ()) == str(tmp_path)


def test_every_function_of_the_provider_carries_the_tag_an_invoke_policy_can_name(anchored):
    """Handlers, completion check and CDK's framework functions (which invoke them) alike: a policy denying
    lambda:InvokeFunction by aws:ResourceTag names them all."""
    _, template = anchored
    functions = template.find_resources("AWS::Lambda::Function")
    assert len(functions) >= 4  # on_event, is_complete, framework onEvent/isComplete/onTimeout
    key, value = FUNCTION_TAG
    assert all({"Key": key, "Value": value} in f["Properties"]["Tags"] for f in functions.values())
