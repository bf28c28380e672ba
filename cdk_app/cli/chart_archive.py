"""The pins of the HyperPod dependency chart, computed as the installer checks them at deploy time.

`hyperpod-kit chart-sha256` uses this to print hyperpod.helm_chart's content_sha256 and dependencies for
an admin with internet access: the content digest of the chart folder in the commit's GitHub source
archive (the installer downloads the same URL), and for each remote dependency of its Chart.yaml the
.tgz URL and `digest` its repository's index.yaml publishes. The installer Lambda ships without the kit,
so it builds the archive URL on its own (a test keeps the two in step); the digest itself has one
implementation, helm_release_handler/chart_digest.py, which both use.
"""

from __future__ import annotations

import io
import re
import tarfile
import tempfile
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hyperpod_constructs.helm_release_handler.chart_digest import ChartDigestError, tree_sha256

CHART_REPOSITORY = "aws/sagemaker-hyperpod-cli"
ARCHIVE_URL = "https://codeload.github.com/{repository}/tar.gz/{revision}"
CHART_FOLDER = "HyperPodHelmChart"
MAX_BYTES = 512 * 1024 * 1024


class ChartPinError(Exception):
    """The archive, the chart or an index cannot be read; the message says which and why."""


@dataclass(frozen=True)
class DependencyPin:
    name: str
    version: str
    repository: str
    url: str | None = None
    sha256: str | None = None
    note: str = ""


@dataclass(frozen=True)
class ChartPins:
    revision: str | None
    content_sha256: str
    dependencies: tuple[DependencyPin, ...]

    def to_yaml(self) -> str:
        pinned = {d.name: {"url": d.url, "sha256": d.sha256} for d in self.dependencies if d.sha256}
        chart: dict[str, Any] = {"revision": self.revision} if self.revision else {}
        chart |= {"content_sha256": self.content_sha256, "dependencies": pinned}
        text = yaml.safe_dump({"hyperpod": {"helm_chart": chart}}, sort_keys=False)
        notes = [f"# not pinned: {d.name} {d.version} ({d.repository}): {d.note}" for d in self.dependencies if not d.sha256]
        return text + "".join(f"{line}\n" for line in notes)


def archive_url(revision: str, repository: str = CHART_REPOSITORY) -> str:
    return ARCHIVE_URL.format(repository=repository, revision=revision)


def read_url(url: str, timeout: float = 120) -> bytes:
    if url.startswith("file://"):
        # A local copy: read with the kit's bounded reader, which refuses a FIFO or device (that would block
        # or never end) before opening it.
        from cdk_app.support.bounded_read import UnreadableInput, read_bounded

        try:
            return read_bounded(urllib.request.url2pathname(urllib.parse.urlparse(url).path), MAX_BYTES)
        except UnreadableInput as err:
            raise ChartPinError(f"cannot read {url}: {err.message}") from err
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = response.read(MAX_BYTES + 1)
    except (OSError, ValueError) as err:
        raise ChartPinError(f"cannot read {url}: {err}") from err
    if len(data) > MAX_BYTES:
        raise ChartPinError(f"{url} is larger than {MAX_BYTES} bytes")
    return data


def chart_pins(archive: bytes, source: str, revision: str | None, indexes: dict[str, str]) -> ChartPins:
    """Pins of the chart in `archive` (a GitHub source archive, or an archive of the chart folder alone).
    indexes: repository URL or dependency name -> where to read its index.yaml instead of <repository>/index.yaml."""
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar, tempfile.TemporaryDirectory() as work:
            commit = tar.pax_headers.get("comment")
            if revision and commit and commit != revision:
                raise ChartPinError(f"{source} is an archive of commit {commit}, not of {revision}")
            prefix = _chart_prefix(tar.getnames(), source)
            members = [m for m in tar.getmembers() if m.name == prefix or m.name.startswith(prefix + "/")]
            tar.extractall(work, members=members, filter="data")
            chart = Path(work) / prefix
            content = tree_sha256(chart)
            chart_yaml = (chart / "Chart.yaml").read_bytes()
    except (tarfile.TarError, OSError, EOFError) as err:
        raise ChartPinError(f"{source} is not a readable .tar.gz: {err}") from err
    except ChartDigestError as err:
        raise ChartPinError(f"{source}: {err}") from err
    where = f"{source}: {prefix}/Chart.yaml"
    metadata = _mapping(_yaml(chart_yaml, where), where, "the chart's metadata")
    dependencies = metadata.get("dependencies") or []
    if not isinstance(dependencies, list):
        raise ChartPinError(f"{where}: dependencies is {_kind(dependencies)}, Helm wants a list of mappings")
    for index, dependency in enumerate(dependencies):
        _mapping(dependency, f"{where}: dependencies[{index}]", "a dependency (name, version, repository)")
        for key in ("name", "version", "repository"):
            # A dependency without a repository is skipped below; a pinned one needs its name.
            missing_name = key == "name" and dependency.get("repository") and not dependency.get(key)
            if not isinstance(dependency.get(key, ""), str) or missing_name:
                raise ChartPinError(f"{where}: dependencies[{index}].{key} is {_kind(dependency.get(key))}, "
                                    "Helm wants text" + (" (the chart's name)" if key == "name" else ""))
    remote = [d for d in dependencies if d.get("repository") and not d["repository"].startswith("file://")]
    return ChartPins(revision, content, tuple(_dependency_pin(d, indexes) for d in remote))


def _kind(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: f"the text {value!r}", bool: "true/false",
            type(None): "empty"}.get(type(value), f"the number {value!r}")


def _yaml(data: bytes, where: str) -> Any:
    """YAML of a Chart.yaml or index.yaml; ChartPinError for text that is not YAML or nests past the parser."""
    try:
        return yaml.safe_load(data.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise ChartPinError(f"{where} is not UTF-8 text: {err}") from err
    except yaml.YAMLError as err:
        raise ChartPinError(f"{where} is not YAML: {err}") from err
    except RecursionError as err:  # PyYAML composes nested collections recursively
        raise ChartPinError(f"{where}: nested too deeply to be a Helm file") from err


def _mapping(value: Any, where: str, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ChartPinError(f"{where} is {_kind(value)}, Helm wants a mapping ({what})")
    return value


def _chart_prefix(names: list[str], source: str) -> str:
    for name in names:
        parts = name.split("/")
        if parts[-1] == "Chart.yaml" and (parts[1:-1] == ["helm_chart", CHART_FOLDER] or parts[:-1] == [CHART_FOLDER]):
            return "/".join(parts[:-1])
    raise ChartPinError(f"{source} holds no helm_chart/{CHART_FOLDER}/Chart.yaml")


def _dependency_pin(dependency: dict[str, Any], indexes: dict[str, str]) -> DependencyPin:
    name, version, repository = str(dependency["name"]), str(dependency.get("version", "")), str(dependency["repository"])
    if not repository.startswith("https://"):
        return DependencyPin(name, version, repository, note="only https chart repositories can be pinned; the "
                             "installer drops it while the chart's values disable it and refuses it otherwise")
    base = repository.rstrip("/") + "/"
    index_source = indexes.get(name) or indexes.get(repository) or base + "index.yaml"
    index = _mapping(_yaml(read_url(index_source), index_source), index_source, "a Helm repository index")
    charts = _mapping(index.get("entries") or {}, f"{index_source}: entries", "chart name -> its versions")
    entries = charts.get(name) or []
    if not isinstance(entries, list):
        raise ChartPinError(f"{index_source}: entries.{name} is {_kind(entries)}, Helm wants a list of chart versions")
    for position, item in enumerate(entries):
        _mapping(item, f"{index_source}: entries.{name}[{position}]", "a chart version")
    entry = next((e for e in entries if str(e.get("version", "")).removeprefix("v") == version.removeprefix("v")), None)
    if entry is None or not entry.get("digest") or not entry.get("urls"):
        raise ChartPinError(f"{index_source} lists no {name} {version} with a digest and a URL")
    where = f"{index_source}: entries.{name} version {entry.get('version')}"
    urls, digest = entry["urls"], entry["digest"]
    # Helm's index (repo.ChartVersion): urls is a list of URLs, digest the archive's SHA-256 in hex.
    if not isinstance(urls, list) or not all(isinstance(u, str) and u for u in urls):
        raise ChartPinError(f"{where}: urls is {_kind(urls)}, Helm wants a list of URLs")
    if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise ChartPinError(f"{where}: digest is {_kind(digest)}, Helm writes the archive's SHA-256 (64 hex digits)")
    url = urllib.parse.urljoin(base, urls[0])
    if not url.startswith(base):
        return DependencyPin(name, version, repository, note=f"its index serves it from {url}, outside the "
                             "repository; the installer downloads only from the repository Chart.yaml names")
    return DependencyPin(name, version, repository, url=url, sha256=digest)
