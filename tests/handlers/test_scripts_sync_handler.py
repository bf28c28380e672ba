"""The lifecycle scripts copy handler: what it uploads and prunes, and the archives it refuses."""

from __future__ import annotations

import io
import zipfile

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber
from support.handlers import load_handler
from support.paths import ROOT

handler = load_handler("scripts_sync_handler")


def zipped(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def test_every_file_is_uploaded_and_stale_keys_are_pruned():
    files = handler.read_archive(zipped({"on_create.sh": "#!/bin/bash\n", "lib/mount.sh": "echo\n"}))
    uploads, deletes = handler.plan(files, ["lifecycle-scripts/on_create.sh", "lifecycle-scripts/old.sh"],
                                    "lifecycle-scripts")
    assert sorted(uploads) == ["lifecycle-scripts/lib/mount.sh", "lifecycle-scripts/on_create.sh"]
    assert uploads["lifecycle-scripts/on_create.sh"] == b"#!/bin/bash\n"
    assert deletes == ["lifecycle-scripts/old.sh"]


def test_the_repository_folder_zips_to_what_nodes_need():
    """The real lifecycle_scripts/ folder, zipped as CDK does, uploads on_create.sh at the prefix root."""
    folder = ROOT / "lifecycle_scripts"
    files = {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()}
    uploads, _ = handler.plan(handler.read_archive(zipped(files)), [], "lifecycle-scripts")
    assert "lifecycle-scripts/on_create.sh" in uploads


@pytest.mark.parametrize(("archive", "message"), [
    (zipped({"../escape.sh": "x"}), "leaves the scripts folder"),
    (zipped({"/abs.sh": "x"}), "leaves the scripts folder"),
    (b"not a zip", "not a zip file"),
])
def test_bad_archives_are_refused(archive, message):
    with pytest.raises(handler.ScriptsSyncError, match=message):
        handler.read_archive(archive)


STACK_ID = "arn:aws:cloudformation:us-east-1:111122223333:stack/HyperPod-dev-cluster/0a1b"
DELETE = {"RequestType": "Delete", "PhysicalResourceId": "s3://b/p/", "StackId": STACK_ID,
          "LogicalResourceId": "Scripts", "ResourceProperties": {"DestinationBucket": "b", "DestinationPrefix": "p"}}
WAITING = {"Create": "CREATE_IN_PROGRESS", "Update": "UPDATE_IN_PROGRESS", "Delete": "DELETE_IN_PROGRESS"}


@pytest.fixture(autouse=True)
def own_stack(monkeypatch):
    """The function's environment as PythonHandlerProvider writes it for a handler anchored to its stack."""
    monkeypatch.setenv("CFN_ANCHOR_STACK_ID", STACK_ID)
    monkeypatch.setenv("AWS_REGION", "us-east-1")


def stubbed(service: str) -> tuple[object, Stubber]:
    client = boto3.client(service, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    return client, Stubber(client)


def confirmed(event: dict, status: str | None = None, resource_type: str = "Custom::LifecycleScripts",
              physical_id: str | None = None) -> tuple[object, Stubber]:
    """A CloudFormation client (the real model) whose DescribeStackResource shows the resource the event names:
    by default in the state CloudFormation gives it while it waits for this request."""
    cloudformation, stub = stubbed("cloudformation")
    stub.add_response("describe_stack_resource", {"StackResourceDetail": {
        "StackId": STACK_ID, "LogicalResourceId": event["LogicalResourceId"], "ResourceType": resource_type,
        "PhysicalResourceId": physical_id or event.get("PhysicalResourceId", "pending"),
        "ResourceStatus": status or WAITING[event["RequestType"]], "LastUpdatedTimestamp": "2026-11-22T12:00:00Z"}},
        {"StackName": STACK_ID, "LogicalResourceId": event["LogicalResourceId"]})
    return cloudformation, stub


def stack_status(status: str, event: dict | None = None) -> tuple[object, Stubber]:
    """DescribeStacks showing the stack in `status`; after the event's confirmation when one is given."""
    cloudformation, stub = confirmed(event) if event else stubbed("cloudformation")
    stub.add_response("describe_stacks", {"Stacks": [{
        "StackName": "HyperPod-dev-cluster", "StackId": STACK_ID, "CreationTime": "2026-11-22T12:00:00Z",
        "StackStatus": status}]}, {"StackName": STACK_ID})
    return cloudformation, stub


@pytest.mark.parametrize("status", ["DELETE_IN_PROGRESS", "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS",
                                    "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS", "UPDATE_ROLLBACK_IN_PROGRESS"])
def test_delete_keeps_the_scripts_unless_a_first_create_rolls_back(monkeypatch, status):
    """Stack deletion and update clean-up keep the scripts (the bucket is retained): no S3 call at all."""
    cloudformation, cfn_stub = stack_status(status, DELETE)
    s3, s3_stub = stubbed("s3")
    monkeypatch.setattr(boto3, "client", {"cloudformation": cloudformation, "s3": s3}.__getitem__)
    with cfn_stub, s3_stub:
        assert handler.on_event(DELETE) == {"PhysicalResourceId": "s3://b/p/"}
        cfn_stub.assert_no_pending_responses()


def test_rollback_of_the_first_create_empties_the_prefix_of_every_version():
    """So that CloudFormation can delete the bucket (RetainExceptOnCreate) and the next deploy recreate it."""
    cloudformation, cfn_stub = stack_status("ROLLBACK_IN_PROGRESS")
    s3, s3_stub = stubbed("s3")
    s3_stub.add_response("list_object_versions", {
        "Versions": [{"Key": "p/on_create.sh", "VersionId": "v2"}, {"Key": "p/on_create.sh", "VersionId": "v1"}],
        "DeleteMarkers": [{"Key": "p/old.sh", "VersionId": "d1"}], "IsTruncated": False},
        {"Bucket": "b", "Prefix": "p/"})
    s3_stub.add_response("delete_objects", {}, {"Bucket": "b", "Delete": {"Quiet": True, "Objects": [
        {"Key": "p/on_create.sh", "VersionId": "v2"}, {"Key": "p/on_create.sh", "VersionId": "v1"},
        {"Key": "p/old.sh", "VersionId": "d1"}]}})
    with cfn_stub, s3_stub:
        assert handler.on_delete(DELETE, cloudformation, s3) == 3
        s3_stub.assert_no_pending_responses()


def test_a_version_that_cannot_be_deleted_fails_with_its_key():
    cloudformation, cfn_stub = stack_status("ROLLBACK_IN_PROGRESS")
    s3, s3_stub = stubbed("s3")
    s3_stub.add_response("list_object_versions", {"Versions": [{"Key": "p/a.sh", "VersionId": "v1"}]},
                         {"Bucket": "b", "Prefix": "p/"})
    s3_stub.add_response("delete_objects", {"Errors": [{"Key": "p/a.sh", "Code": "AccessDenied", "Message": "denied"}]},
                         {"Bucket": "b", "Delete": {"Quiet": True, "Objects": [{"Key": "p/a.sh", "VersionId": "v1"}]}})
    with cfn_stub, s3_stub, pytest.raises(handler.ScriptsSyncError, match="p/a.sh: AccessDenied denied"):
        handler.on_delete(DELETE, cloudformation, s3)


def test_generated_files_join_the_folder_and_may_not_replace_a_script():
    files = handler.with_generated({"on_create.sh": b"x"}, {"provisioning.env": "A=1\n"})
    assert files == {"on_create.sh": b"x", "provisioning.env": b"A=1\n"}
    with pytest.raises(handler.ScriptsSyncError, match="on_create.sh is both in lifecycle_scripts/ and written by the kit"):
        handler.with_generated({"on_create.sh": b"x"}, {"on_create.sh": "y"})


# --- Create and Update (report findings 7 and 12) ----------------------------------------------------------------

SCRIPTS = zipped({"on_create.sh": "#!/bin/bash\n", "lib/a.sh": "a\n", "lib/b.sh": "b\n"})


def sync_event(request: str) -> dict[str, object]:
    return {"RequestType": request, "StackId": STACK_ID, "LogicalResourceId": "Scripts",
            **({"PhysicalResourceId": "s3://b/p/"} if request == "Update" else {}), "ResourceProperties": {
        "DestinationBucket": "b", "DestinationPrefix": "p", "SourceBucket": "assets", "SourceKey": "scripts.zip"}}


def source_and_listing(stub: Stubber, existing: list[str]) -> None:
    stub.add_response("get_object", {"Body": StreamingBody(io.BytesIO(SCRIPTS), len(SCRIPTS))},
                      {"Bucket": "assets", "Key": "scripts.zip"})
    stub.add_response("list_objects_v2", {"Contents": [{"Key": key} for key in existing], "IsTruncated": False},
                      {"Bucket": "b", "Prefix": "p/"})


def put(stub: Stubber, key: str, version: str) -> None:
    stub.add_response("put_object", {"VersionId": version},
                      {"Bucket": "b", "Key": key, "Body": ANY, "ContentType": ANY})


def with_clients(monkeypatch, s3: object, event: dict) -> None:
    """boto3.client gives the stubbed S3 client, and a CloudFormation client that confirms `event`."""
    cloudformation, stub = confirmed(event)
    stub.activate()
    monkeypatch.setattr(boto3, "client", {"s3": s3, "cloudformation": cloudformation}.__getitem__)


class Context:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def get_remaining_time_in_millis(self) -> int:
        return int(self.seconds * 1000)


def test_a_first_create_that_fails_part_way_removes_what_it_wrote(monkeypatch):
    """The provider framework answers the rollback's Delete of a failed Create itself, so the handler's
    own Delete never runs: the Create removes the versions it wrote before it fails."""
    s3, stub = stubbed("s3")
    source_and_listing(stub, [])
    put(stub, "p/lib/a.sh", "va")
    put(stub, "p/lib/b.sh", "vb")
    stub.add_client_error("put_object", service_error_code="SlowDown", http_status_code=503,
                          service_message="Please reduce your request rate.")
    stub.add_response("delete_objects", {}, {"Bucket": "b", "Delete": {"Quiet": True, "Objects": [
        {"Key": "p/lib/a.sh", "VersionId": "va"}, {"Key": "p/lib/b.sh", "VersionId": "vb"}]}})
    with_clients(monkeypatch, s3, sync_event("Create"))
    with stub, pytest.raises(ClientError, match="SlowDown"):
        handler.on_event(sync_event("Create"), Context(300))
    stub.assert_no_pending_responses()


def test_a_create_out_of_time_stops_with_a_reason_and_removes_what_it_wrote(monkeypatch):
    s3, stub = stubbed("s3")
    source_and_listing(stub, [])
    put(stub, "p/lib/a.sh", "va")
    stub.add_response("delete_objects", {}, {"Bucket": "b", "Delete": {"Quiet": True, "Objects": [
        {"Key": "p/lib/a.sh", "VersionId": "va"}]}})
    with_clients(monkeypatch, s3, sync_event("Create"))
    remaining = iter([300, 30])
    context = Context(0)
    context.get_remaining_time_in_millis = lambda: next(remaining) * 1000
    with stub, pytest.raises(handler.ScriptsSyncError, match="stopped before uploading p/lib/b.sh: less than 60 s"):
        handler.on_event(sync_event("Create"), context)
    stub.assert_no_pending_responses()


def test_an_update_that_fails_part_way_keeps_what_nodes_may_already_use(monkeypatch):
    s3, stub = stubbed("s3")
    source_and_listing(stub, ["p/lib/a.sh"])
    put(stub, "p/lib/a.sh", "va2")
    stub.add_client_error("put_object", service_error_code="SlowDown", http_status_code=503)
    with_clients(monkeypatch, s3, sync_event("Update"))
    with stub, pytest.raises(ClientError):
        handler.on_event(sync_event("Update"), Context(300))
    stub.assert_no_pending_responses()


def test_a_stale_script_s3_would_not_delete_fails_with_its_key(monkeypatch):
    s3, stub = stubbed("s3")
    source_and_listing(stub, ["p/old_script.sh"])
    for key in ("p/lib/a.sh", "p/lib/b.sh", "p/on_create.sh"):
        put(stub, key, "v")
    stub.add_response("delete_objects", {"Errors": [{"Key": "p/old_script.sh", "Code": "AccessDenied",
                                                     "Message": "Access Denied"}]},
                      {"Bucket": "b", "Delete": {"Quiet": True, "Objects": [{"Key": "p/old_script.sh"}]}})
    with_clients(monkeypatch, s3, sync_event("Update"))
    with stub, pytest.raises(handler.ScriptsSyncError, match="could not remove stale scripts in s3://b/ \\(1 key\\(s\\)\\): "
                                                             "p/old_script.sh: AccessDenied Access Denied"):
        handler.on_event(sync_event("Update"), Context(300))


# --- only CloudFormation's own requests of this stack are acted on (cfn_anchor.py) --------------------------------


@pytest.mark.parametrize(("change", "answer", "message"), [
    ({"StackId": STACK_ID.replace("HyperPod-dev-cluster", "HyperPod-dev-clusterx")}, {}, "is not this handler's stack"),
    ({"StackId": STACK_ID.replace("111122223333", "444455556666")}, {}, "is not this handler's stack"),
    ({}, {"status": "UPDATE_COMPLETE"}, "Scripts of .* is UPDATE_COMPLETE .*; CloudFormation is not sending a Update"),
    ({}, {"physical_id": "s3://attacker/p/"}, "CloudFormation is not sending a Update for 's3://b/p/'"),
    ({}, {"resource_type": "AWS::S3::Bucket"}, "is a AWS::S3::Bucket, not a Custom::LifecycleScripts"),
])
def test_an_event_cloudformation_does_not_confirm_writes_nothing(monkeypatch, change, answer, message):
    """Whoever may invoke the function would otherwise choose what every new node runs as root."""
    event = {**sync_event("Update"), **change}
    s3, s3_stub = stubbed("s3")  # no response queued: any S3 call fails the test
    cloudformation, cfn_stub = (stubbed("cloudformation") if "StackId" in change
                                else confirmed(event, **answer))
    monkeypatch.setattr(boto3, "client", {"s3": s3, "cloudformation": cloudformation}.__getitem__)
    with cfn_stub, s3_stub, pytest.raises(handler.ScriptsSyncError, match="refusing the event: .*" + message):
        handler.on_event(event, Context(300))
    cfn_stub.assert_no_pending_responses()


def test_a_forged_delete_during_a_first_create_rollback_removes_nothing(monkeypatch):
    """The one Delete that empties the prefix: refused unless CloudFormation is deleting this very resource."""
    s3, s3_stub = stubbed("s3")
    cloudformation, cfn_stub = confirmed(DELETE, status="CREATE_COMPLETE")
    monkeypatch.setattr(boto3, "client", {"s3": s3, "cloudformation": cloudformation}.__getitem__)
    with cfn_stub, s3_stub, pytest.raises(handler.ScriptsSyncError, match="CloudFormation is not sending a Delete"):
        handler.on_event(DELETE)
