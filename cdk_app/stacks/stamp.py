"""The config-digest stamp: which synth a template is of, so `plan --current` can tell a stale cdk.out."""

from __future__ import annotations

import hashlib
from typing import Any

DIGEST_KEY = "hyperpod-kit:config-sha256"


# The stack whose template carries the config digest: the governance stack, or in a Batch-only environment
# (no governance stack) the Batch stack.
DIGEST_STACK_SUFFIXES = ("-governance", "-batch")


def config_digest(config: Any) -> str:
    """A digest of the validated config's content, stamped into the governance stack's template (or, with no
    governance stack, the Batch stack's). Acknowledged warnings are left out: they change no template."""
    return hashlib.sha256(config.model_dump_json(exclude={"acknowledged_warnings"}).encode()).hexdigest()


def stamp(app: Any, config: Any) -> None:
    """Write config_digest(config) into the governance stack's template Metadata, so `plan --current` can
    tell a synth of this config from a stale one. Only there: a digest in the network and cluster templates
    would change them on every quota edit, which must leave them byte-identical."""
    from aws_cdk import Stack

    stacks = [child for child in app.node.children if isinstance(child, Stack)]
    for child in digest_stacks(stacks, lambda stack: stack.stack_name):
        child.add_metadata(DIGEST_KEY, config_digest(config))


def digest_stacks(stacks: list[Any], name: Any) -> list[Any]:
    """The stacks that carry the digest: those of the first suffix of DIGEST_STACK_SUFFIXES any stack has."""
    for suffix in DIGEST_STACK_SUFFIXES:
        found = [stack for stack in stacks if name(stack).endswith(suffix)]
        if found:
            return found
    return []
