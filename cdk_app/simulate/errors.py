"""The error a workload file's reader raises: where in the file (a path of keys and list indices) and what is wrong
with what is allowed, for the Kueue and the Batch workload readers alike."""

from __future__ import annotations

from cdk_app.findings import format_path


class WorkloadError(Exception):
    """A workload item the simulator refuses; `path` e.g. ("batch_jobs", 3, "queue"), rendered as the config
    findings render theirs (batch_jobs[3].queue)."""

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(f"{format_path(path)}: {message}" if path else message)
        self.path = path
        self.message = message
