"""Custom resource handler: copy the lifecycle scripts asset (a zip CDK uploaded) and the files the kit
generates from config into the lifecycle bucket, file by file under a prefix, and delete what is under
the prefix but no longer in either.

Nodes then run exactly the repository's set of scripts. On stack deletion the scripts stay: the
bucket is retained, and a cluster that outlives the stack still needs them to replace nodes. Only when
the stack rolls back a failed first create (ROLLBACK_IN_PROGRESS) does Delete remove every version
under the prefix, so that CloudFormation can delete the then empty bucket (its RetainExceptOnCreate
policy) and the next deploy can create it again under its fixed name.
Standard library and boto3 only (both are in the Lambda runtime).
"""

from __future__ import annotations

import io
import mimetypes
import zipfile
from typing import Any

MAX_FILES = 1000


class ScriptsSyncError(Exception):
    """A failure the deployment must stop on; the message is what CloudFormation shows."""


def on_event(event: dict[str, Any], _context: Any = None) -> dict[str, Any]:
    props = event["ResourceProperties"]
    bucket, prefix = props["DestinationBucket"], props["DestinationPrefix"]
    physical_id = f"s3://{bucket}/{prefix}/"
    import boto3

    if event["RequestType"] == "Delete":
        on_delete(event, boto3.client("cloudformation"), boto3.client("s3"))
        return {"PhysicalResourceId": event.get("PhysicalResourceId", physical_id)}

    s3 = boto3.client("s3")
    archive = s3.get_object(Bucket=props["SourceBucket"], Key=props["SourceKey"])["Body"].read()
    files = with_generated(read_archive(archive), props.get("GeneratedFiles") or {})
    existing = list_keys(s3, bucket, prefix)
    uploads, deletes = plan(files, existing, prefix)
    for key, body in uploads.items():
        content_type = mimetypes.guess_type(key)[0] or ("text/x-shellscript" if key.endswith(".sh") else "text/plain")
        s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType=content_type)
    for start in range(0, len(deletes), 1000):
        batch = deletes[start:start + 1000]
        s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in batch], "Quiet": True})
    return {"PhysicalResourceId": physical_id,
            "Data": {"Uploaded": len(uploads), "Deleted": len(deletes), "SourceS3Uri": physical_id}}


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
    for start in range(0, len(versions), 1000):
        result = s3.delete_objects(Bucket=bucket, Delete={"Objects": versions[start:start + 1000], "Quiet": True})
        if result.get("Errors"):
            first = result["Errors"][0]
            raise ScriptsSyncError(f"could not empty s3://{bucket}/{prefix}/ after the failed create: "
                                   f"{first['Key']}: {first.get('Code')} {first.get('Message')}")
    return len(versions)
