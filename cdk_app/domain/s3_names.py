"""S3 bucket names: one rule for `batch-job --output-s3` and the storage section's data repository paths."""

from __future__ import annotations

import re

# S3 general purpose bucket naming rules (Amazon S3 User Guide, "Bucket naming rules").
BUCKET_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
BUCKET_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")


def bucket_name_problem(bucket: str) -> str | None:
    """Why S3 refuses `bucket` as a general purpose bucket name, or None."""
    if not 3 <= len(bucket) <= 63:
        return f"{len(bucket)} characters (3-63)"
    if not re.fullmatch(r"[a-z0-9.-]+", bucket):
        return "only lower-case letters, digits, '.' and '-'"
    # Dot-separated labels, each starting and ending with a letter or digit (so no '..', '.-' or '-.').
    if not all(re.fullmatch(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?", label) for label in bucket.split(".")):
        return "each '.'-separated part must start and end with a letter or digit"
    if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", bucket):
        return "formatted as an IP address"
    if bucket.startswith(BUCKET_RESERVED_PREFIXES) or bucket.endswith(BUCKET_RESERVED_SUFFIXES):
        return (f"prefixes {', '.join(BUCKET_RESERVED_PREFIXES)} and suffixes {', '.join(BUCKET_RESERVED_SUFFIXES)} "
                "are reserved")
    return None
