"""Custom resource handler: copy the lifecycle scripts asset (a zip CDK uploaded) and the files the kit
generates from config into the lifecycle bucket, file by file under a prefix, and delete what is under
the prefix but no longer in either.

Nodes then run exactly the repository's set of scripts. On stack deletion the scripts stay: the
bucket is retained, and a cluster that outlives the stack still needs them to replace nodes. Only when
the stack rolls back a failed first create (ROLLBACK_IN_PROGRESS) does Delete remove every version
under the prefix, so that CloudFormation can delete the then empty bucket (its RetainExceptOnCreate
policy) and the next deploy can create it again under its fixed name; a Create that itself fails part-way
removes what it wrote before failing, since the rollback sends it no Delete.

What this handler writes, every new node runs as root: it acts only on a request CloudFormation is making of
its own stack now (cfn_anchor.py, shared with the installer), never on an event from another caller allowed
lambda:InvokeFunction. Standard library and boto3 only (both are in the Lambda runtime).
"""

from __future__ import annotations

import io
import mimetypes
import zipfile
from typing import Any

import cfn_anchor

MAX_FILES = 1000
# Uploads stop with this much of the Lambda's time left, enough to remove what a failed first create wrote.
MARGIN_SECONDS = 60


class ScriptsSyncError(Exception):
    """A failure the deployment must stop on; the message is what CloudFormation shows."""


def on_event(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    props = event["ResourceProperties"]
    bucket, prefix = props["DestinationBucket"], props["DestinationPrefix"]
    physical_id = f"s3://{bucket}/{prefix}/"
    import boto3

    cloudformation = boto3.client("cloudformation")
    try:
        cfn_anchor.confirm_own_stack(event, "Custom::LifecycleScripts", cloudformation)
    except cfn_anchor.NotAnchored as err:
        raise ScriptsSyncError(f"refusing the event: {err}") from err
    if event["RequestType"] == "Delete":
        on_delete(event, cloudformation, boto3.client("s3"))
        return {"PhysicalResourceId": event.get("PhysicalResourceId", physical_id)}
    uploaded, deleted = sync(event, boto3.client("s3"), Deadline(context))
    return {"PhysicalResourceId": physical_id,
            "Data": {"Uploaded": uploaded, "Deleted": deleted, "SourceS3Uri": physical_id}}


class Deadline:
    """Stops the uploads with a reason (and time left to clean up) before Lambda would kill the function."""

    def __init__(self, context: Any) -> None:
        self.context = context

    def check(self, key: str) -> None:
        if self.context is not None and self.context.get_remaining_time_in_millis() < MARGIN_SECONDS * 1000:
            raise ScriptsSyncError(f"stopped before uploading {key}: less than {MARGIN_SECONDS} s of the Lambda's "
                                   "time left; deploy again")


def sync(event: dict[str, Any], s3: Any, deadline: Deadline) -> tuple[int, int]:
    """Make the prefix hold exactly the scripts; returns how many keys were written and deleted. A Create
    that fails part-way removes the versions it wrote before it fails: CloudFormation's rollback sends
    no Delete after a failed Create (the provider framework answers it), so nothing else would, and
    the bucket could then be neither deleted nor created again under its fixed name."""
    props = event["ResourceProperties"]
    bucket, prefix = props["DestinationBucket"], props["DestinationPrefix"]
    archive = s3.get_object(Bucket=props["SourceBucket"], Key=props["SourceKey"])["Body"].read()
    files = with_generated(read_archive(archive), props.get("GeneratedFiles") or {})
    uploads, deletes = plan(files, list_keys(s3, bucket, prefix), prefix)
    written: list[dict[str, str]] = []
    try:
        for key, body in uploads.items():
            deadline.check(key)
            content_type = mimetypes.guess_type(key)[0] or ("text/x-shellscript" if key.endswith(".sh") else "text/plain")
            response = s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType=content_type)
            written.append({"Key": key, **({"VersionId": response["VersionId"]} if response.get("VersionId") else {})})
        delete_versions(s3, bucket, [{"Key": key} for key in deletes], "could not remove stale scripts")
    except Exception:
        if event["RequestType"] == "Create":
            delete_versions(s3, bucket, written, "could not remove what the failed create wrote")
        raise
    return len(uploads), len(deletes)


def delete_versions(s3: Any, bucket: str, objects: list[dict[str, str]], what: str) -> None:
    """DeleteObjects in batches of 1000; any key S3 could not delete fails with the keys."""
    for start in range(0, len(objects), 1000):
        result = s3.delete_objects(Bucket=bucket, Delete={"Objects": objects[start:start + 1000], "Quiet": True})
        errors = result.get("Errors") or []
        if errors:
            listed = "; ".join(f"{e['Key']}: {e.get('Code')} {e.get('Message')}" for e in errors[:10])
            raise ScriptsSyncError(f"{what} in s3://{bucket}/ ({len(errors)} key(s)): {listed}")


def read_archive(archive: bytes) -> dict[str, bytes]:
    """Relative path -> content of every file in the zip; refuses paths that climb out."""
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
            names = [n for n in zipped.namelist() if not n.endswith("/")]
            if len(names) > MAX_FILES:
                raise ScriptsSyncError(f"the scripts asset holds {len(names)} files; at most {MAX_FILES}")
            for name in names:
                if name.startswith("/") or ".." in name.split("/"):
                    raise ScriptsSyncError(f"refusing script path {name!r}: it leaves the scripts folder")
            return {name: zipped.read(name) for name in names}
    except zipfile.BadZipFile as err:
        raise ScriptsSyncError(f"the scripts asset is not a zip file: {err}") from err


def with_generated(files: dict[str, bytes], generated: dict[str, str]) -> dict[str, bytes]:
    """The folder's files plus the ones the kit writes from config; a clash is an error, not an override."""
    clash = sorted(set(files) & set(generated))
    if clash:
        raise ScriptsSyncError(f"{', '.join(clash)} is both in lifecycle_scripts/ and written by the kit; "
                               "remove it from the folder")
    return {**files, **{name: text.encode() for name, text in generated.items()}}


def plan(files: dict[str, bytes], existing: list[str], prefix: str) -> tuple[dict[str, bytes], list[str]]:
    """Keys to write and keys to delete so that the prefix holds exactly `files`."""
    uploads = {f"{prefix}/{name}": body for name, body in sorted(files.items())}
    deletes = sorted(key for key in existing if key not in uploads)
    return uploads, deletes


def list_keys(s3: Any, bucket: str, prefix: str) -> list[str]:
    keys: list[str] = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{prefix}/"):
        keys.extend(item["Key"] for item in page.get("Contents", []))
    return keys


def on_delete(event: dict[str, Any], cloudformation: Any, s3: Any) -> int:
    """Empty the prefix when the stack is rolling back its first create; keep everything otherwise.
    Returns how many object versions were removed."""
    [stack] = cloudformation.describe_stacks(StackName=event["StackId"])["Stacks"]
    if stack["StackStatus"] != "ROLLBACK_IN_PROGRESS":
        return 0
    props = event["ResourceProperties"]
    bucket, prefix = props["DestinationBucket"], props["DestinationPrefix"]
    versions = []
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=f"{prefix}/"):
        for item in page.get("Versions", []) + page.get("DeleteMarkers", []):
            versions.append({"Key": item["Key"], "VersionId": item["VersionId"]})
    delete_versions(s3, bucket, versions, f"could not empty s3://{bucket}/{prefix}/ after the failed create")
    return len(versions)
