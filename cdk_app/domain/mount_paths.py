"""Where a job's volume may be mounted: one rule for the storage section's mount_path (HPK911) and `job --volume`."""

from __future__ import annotations

# The container runtime's own mounts (and the job's memory-backed /dev/shm): a volume there would hide them.
RUNTIME_DIRECTORIES = ("dev", "proc", "sys")

ALLOWED = f"an absolute path without '.' or '..', not / and outside /{', /'.join(RUNTIME_DIRECTORIES)}"


def bad_mount_path(path: str) -> bool:
    """Whether `path` is no place for a job's volume (ALLOWED says what is)."""
    segments = [s for s in path.split("/")[1:] if s]
    return (not path.startswith("/") or not segments or bool({".", ".."} & set(segments))
            or segments[0] in RUNTIME_DIRECTORIES)
