"""The one line between the two kinds of refusal of a command's request (`job`, `batch-job`).

A usage error (exit 2) is a request no environment could accept: an option value that is malformed or outside
the option's own range, or options that contradict each other - judged without reading the config. A finding
(exit 1) is a well-formed request that the environment refuses on its merits: the team, the instance type, the
quota, the nodes. An exception that is an `OptionError` is the first kind; any other refusal is the second.
"""

from __future__ import annotations


class OptionError(Exception):
    """A malformed or out-of-range option value, or contradicting options: a usage error (exit 2)."""
