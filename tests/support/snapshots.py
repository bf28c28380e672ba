"""Template JSON made comparable across synths: asset hashes and temporary paths masked."""

from __future__ import annotations

import json
import re
from pathlib import Path

ASSET_HASH = re.compile(r"\b[0-9a-f]{64}\b")


def normalised(path: Path) -> dict:
    """The template with asset hashes replaced, so a snapshot changes only when the template does."""
    return json.loads(ASSET_HASH.sub("<asset-hash>", path.read_text()))
