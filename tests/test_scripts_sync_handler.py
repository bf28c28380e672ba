"""The lifecycle scripts copy handler: what it uploads and prunes, and the archives it refuses."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from handlers import load_handler

ROOT = Path(__file__).resolve().parent.parent
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


def test_delete_keeps_the_scripts():
    event = {"RequestType": "Delete", "PhysicalResourceId": "s3://b/p/",
             "ResourceProperties": {"DestinationBucket": "b", "DestinationPrefix": "p"}}
    assert handler.on_event(event) == {"PhysicalResourceId": "s3://b/p/"}


def test_generated_files_join_the_folder_and_may_not_replace_a_script():
    files = handler.with_generated({"on_create.sh": b"x"}, {"provisioning.env": "A=1\n"})
    assert files == {"on_create.sh": b"x", "provisioning.env": b"A=1\n"}
    with pytest.raises(handler.ScriptsSyncError, match="on_create.sh is both in lifecycle_scripts/ and written by the kit"):
        handler.with_generated({"on_create.sh": b"x"}, {"on_create.sh": "y"})
