"""The source archive of the HyperPod dependency chart, as the installer fetches it at deploy time.

`hyperpod-kit chart-sha256` uses this to print the checksum an admin pins in
hyperpod.helm_chart.sha256. The installer Lambda (constructs/helm_release_handler) builds the same
URL on its own, since it ships without the kit; a test keeps the two in step.
"""

from __future__ import annotations

import hashlib
import urllib.request

CHART_REPOSITORY = "aws/sagemaker-hyperpod-cli"
ARCHIVE_URL = "https://codeload.github.com/{repository}/tar.gz/{revision}"


def archive_url(revision: str, repository: str = CHART_REPOSITORY) -> str:
    return ARCHIVE_URL.format(repository=repository, revision=revision)


def archive_sha256(url: str, timeout: float = 120) -> str:
    """SHA-256 of the bytes at `url`, read in chunks."""
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (https or a local file the admin names)
        for chunk in iter(lambda: response.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
