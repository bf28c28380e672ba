"""Content digest of an extracted chart folder ("hpk-tree-v1"), the pin of hyperpod.helm_chart.content_sha256.

Definition: list every regular file under the folder by its path relative to the folder ("/"-separated,
no leading "./"), sorted by the path's UTF-8 bytes. For each, one line
    "<mode> <sha256 of the file's bytes, lower-case hex>  <path>\\n"
where <mode> is 100755 if the owner may execute the file and 100644 otherwise (git's two file modes).
The digest is the SHA-256 of those lines concatenated. Directories count only through their files
(git records no empty folder); a symbolic link or any other non-regular entry is refused.

It depends on the chart's bytes only - not on the archive's compression, timestamps or owner, which
GitHub does not promise to keep stable - and coreutils reproduce it:
    cd HyperPodHelmChart && find . -type f -printf '%P\\n' | LC_ALL=C sort | while IFS= read -r p; do
      m=100644; [ -x "$p" ] && m=100755; printf '%s %s  %s\\n' $m "$(sha256sum < "$p" | cut -c1-64)" "$p"
    done | sha256sum

Standard library only: the installer Lambda ships this file, and `hyperpod-kit chart-sha256` imports it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


class ChartDigestError(Exception):
    """The folder holds something the digest does not define (a link, a device...)."""


def tree_records(folder: Path) -> list[str]:
    """The digest's lines, in order."""
    found: list[tuple[bytes, str]] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(root) / name
            mode = path.lstat().st_mode
            relative = path.relative_to(folder).as_posix()
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                raise ChartDigestError(f"{relative} is not a regular file or folder; the chart digest refuses it")
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            git_mode = "100755" if mode & stat.S_IXUSR else "100644"
            found.append((relative.encode(), f"{git_mode} {digest}  {relative}\n"))
    return [line for _, line in sorted(found)]


def tree_sha256(folder: Path) -> str:
    """The content digest of `folder` (see the module's docstring)."""
    digest = hashlib.sha256()
    for line in tree_records(folder):
        digest.update(line.encode())
    return digest.hexdigest()
