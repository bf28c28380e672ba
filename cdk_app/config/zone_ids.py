"""Region names and the prefix of a region's availability zone ids (us-east-1 -> use1): what the config model,
its reader's messages and the region rules all need, so it lives below them."""

from __future__ import annotations

import re

# A region name as the config takes it (and nothing that could step out of a folder when a file is named after it).
REGION_PATTERN = r"^[a-z]{2}(-[a-z]+)+-[0-9]$"

_REGION_WORDS = {
    "northeast": "ne", "northwest": "nw", "southeast": "se", "southwest": "sw",
    "north": "n", "south": "s", "east": "e", "west": "w", "central": "c", "gov": "g",
}


def region_code(region: str) -> str:
    """us-east-1 -> use1, ap-northeast-2 -> apne2: the prefix of the region's AZ ids."""
    parts = region.split("-")
    return parts[0] + "".join(_REGION_WORDS.get(word, word[:1]) for word in parts[1:-1]) + parts[-1]


def is_region_name(text: str) -> bool:
    return len(text) <= 40 and re.fullmatch(REGION_PATTERN, text) is not None
