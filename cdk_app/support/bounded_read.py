"""Read an input file, or standard input, with a hard byte cap whatever the file is.

The size a file reports cannot be trusted: a FIFO or /dev/zero reports 0 and then never ends, and a FIFO
without a writer blocks the open itself. Only regular files (and standard input, named `-`) are read; the
open is non-blocking and the file type is checked again on the open descriptor, so a file swapped for a
FIFO between the two checks cannot hang the reader either.
"""

from __future__ import annotations

import os
import stat
import sys


class UnreadableInput(Exception):
    """An input that cannot be read; `code` is the finding code, `hint` says what to do."""

    def __init__(self, code: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bounded(path: str, limit: int, example: str = "config/dev.yaml", stdin: bool = True) -> bytes:
    """At most `limit` bytes of the regular file `path` (or of standard input for `-`, where `stdin`); UnreadableInput
    if the file is missing, not a regular file, unreadable or larger than `limit`. `example` is the kind of file
    the hints name; `stdin` says whether they may offer `-` (only where the caller reads it)."""
    if path == "-" and stdin:
        data = _read_stdin(limit)
    else:
        data = _read_regular(path, limit, example, stdin)
    if len(data) > limit:
        raise UnreadableInput("HPK005", f"more than {limit} bytes", f"an input may hold at most {limit} bytes")
    return data


def _read_stdin(limit: int) -> bytes:
    # With descriptor 0 closed (`<&-`) Python has no sys.stdin at all; a descriptor that is not readable fails.
    if sys.stdin is None:
        raise UnreadableInput("HPK001", "standard input is closed", "pipe the content in, or name a file")
    try:
        return sys.stdin.buffer.read(limit + 1)
    except (OSError, ValueError) as err:
        raise UnreadableInput("HPK001", f"standard input cannot be read ({getattr(err, 'strerror', None) or err})",
                              "pipe the content in, or name a file") from None


def _read_regular(path: str, limit: int, example: str, stdin: bool) -> bytes:
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise UnreadableInput("HPK001", "is a directory", f"name a file such as {example}")
        if not stat.S_ISREG(mode):
            raise UnreadableInput("HPK001", f"is {_kind(mode)}, not a regular file",
                                  "save the content to a file and name that file"
                                  + (", or pass it on standard input as -" if stdin else ""))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as stream:
            mode = os.fstat(stream.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise UnreadableInput("HPK001", f"is {_kind(mode)}, not a regular file",
                                      "save the content to a file and name that file")
            return stream.read(limit + 1)
    except FileNotFoundError:
        raise UnreadableInput("HPK001", "file not found", f"name an existing file such as {example}") from None
    except PermissionError:
        raise UnreadableInput("HPK001", "permission denied", "make the file readable by you (ls -l shows who may read it)") from None
    except IsADirectoryError:
        raise UnreadableInput("HPK001", "is a directory", f"name a file such as {example}") from None
    except OSError as err:
        raise UnreadableInput("HPK001", f"cannot read file: {err.strerror or err}", "check the path and its permissions") from None
    except ValueError:  # a NUL byte in the name
        raise UnreadableInput("HPK001", "is not a valid file name", f"name a file such as {example}") from None
