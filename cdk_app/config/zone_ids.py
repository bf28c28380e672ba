"""The prefix of a region's availability zone ids (us-east-1 -> use1): what the config reader's messages and the
region rules both need, so it lives below both."""

from __future__ import annotations

_REGION_WORDS = {
    "northeast": "ne", "northwest": "nw", "southeast": "se", "southwest": "sw",
    "north": "n", "south": "s", "east": "e", "west": "w", "central": "c", "gov": "g",
}


def region_code(region: str) -> str:
    """us-east-1 -> use1, ap-northeast-2 -> apne2: the prefix of the region's AZ ids."""
    parts = region.split("-")
    return parts[0] + "".join(_REGION_WORDS.get(word, word[:1]) for word in parts[1:-1]) + parts[-1]
