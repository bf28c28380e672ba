"""Is this a container image reference the kubelet and SageMaker can pull? The grammar is the one the
container runtimes parse with (github.com/distribution/reference: [domain[:port]/]path[:tag][@digest], the
path lower-case, at most 255 characters, a digest's hex as long as its algorithm's hash), written here as
regular expressions of our own; tests/support/data/distribution-reference-cases.json holds that package's own test
table, which tests/unit/cli/test_hostile_tools.py runs against this."""

from __future__ import annotations

import re

_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*|\[[a-fA-F0-9:]+\])"
_DOMAIN = rf"{_HOST}(?::[0-9]+)?"
_PATH = rf"{_COMPONENT}(?:/{_COMPONENT})*"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
REFERENCE = re.compile(rf"((?:{_DOMAIN}/)?{_PATH})(?::({_TAG}))?(?:@({_DIGEST}))?")
NAME = re.compile(rf"(?:({_DOMAIN})/)?({_PATH})")
PATH_MAX = 255
# Digest algorithms the runtimes register and the hex length of each (OCI image spec, go-digest).
DIGEST_HEX = {"sha256": 64, "sha384": 96, "sha512": 128}


def reference_problem(image: str) -> str | None:
    """Why `image` is not a pullable reference, or None."""
    if not image:
        return "empty"
    found = REFERENCE.fullmatch(image)
    if found is None:
        if REFERENCE.fullmatch(image.lower()):
            return "the repository must be lower-case"
        return "not [registry[:port]/]repository[:tag][@digest] (lower-case letters, digits and . _ - in the repository)"
    name = NAME.fullmatch(found.group(1))
    if name is not None and len(name.group(2)) > PATH_MAX:
        return f"the repository is {len(name.group(2))} characters (at most {PATH_MAX})"
    if found.group(3):
        algorithm, _, hexdigits = found.group(3).partition(":")
        if DIGEST_HEX.get(algorithm) != len(hexdigits) or not re.fullmatch(r"[0-9a-f]+", hexdigits):
            return (f"digest {found.group(3)[:80]!r}: {', '.join(f'{a}: {n} lower-case hex digits' for a, n in DIGEST_HEX.items())}")
    return None
