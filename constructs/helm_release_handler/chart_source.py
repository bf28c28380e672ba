"""The chart the installer runs, made of pinned bytes only.

1. The GitHub source archive of the pinned commit is downloaded; it must carry that commit id (git
   archive writes it as the pax comment) and its helm_chart/HyperPodHelmChart folder must have the
   pinned content digest (chart_digest.py). Nothing else of the archive is extracted.
2. Each remote dependency of Chart.yaml that the values enable is downloaded from the pinned URL, which
   must lie in the repository Chart.yaml names; its SHA-256 must equal the pin (the `digest` its
   repository's index.yaml publishes) and it must hold the chart name and version Chart.yaml asks for.
   It is then placed in charts/, where helm loads it without any download.
3. Remote dependencies the values disable (cert-manager at a00b22d) are dropped from Chart.yaml and
   Chart.lock, so that no step can fetch them. An enabled remote dependency without a pin, an enabled
   local sub-chart that needs remote charts of its own, or a pin for a dependency the chart does not
   have is refused.
The chart is then installed with plain `helm upgrade --install`: no `helm dependency build`/`update`,
no repository index, no network but the Kubernetes API.
"""

from __future__ import annotations

import hashlib
import io
import json
import posixpath
import re
import tarfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chart_digest import ChartDigestError, tree_sha256
from installer_tools import Budget, HelmReleaseError, read_yaml_files

ARCHIVE_URL = "https://codeload.github.com/{repository}/tar.gz/{revision}"
CHART_PATH = "helm_chart/HyperPodHelmChart"
MAX_DOWNLOAD_BYTES = 512 * 1024 * 1024
# A download may take this long in all (less when the request's budget is shorter); one read this long.
DOWNLOAD_SECONDS, READ_SECONDS, CHUNK_BYTES = 300.0, 30.0, 1024 * 1024
TGZ_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*\.tgz")


@dataclass(frozen=True)
class DependencyPin:
    url: str
    sha256: str


def download(url: str, budget: Budget) -> bytes:
    """The body of `url`, within an overall deadline taken from the budget (a socket timeout alone bounds
    each read, not a server that sends a byte now and then)."""
    total = min(DOWNLOAD_SECONDS, budget.require(f"download {url}", 10) - 5)
    deadline = time.monotonic() + total
    chunks, size = [], 0
    try:
        with urllib.request.urlopen(url, timeout=min(READ_SECONDS, total)) as response:  # noqa: S310 (https URLs fixed at synth)
            while chunk := response.read1(CHUNK_BYTES):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_DOWNLOAD_BYTES:
                    raise HelmReleaseError(f"{url} is larger than {MAX_DOWNLOAD_BYTES} bytes")
                if time.monotonic() > deadline:
                    raise HelmReleaseError(f"download of {url} did not finish within {total:.0f} s ({size} bytes "
                                           "so far); the egress to it is too slow - deploy again later")
    except OSError as err:
        raise HelmReleaseError(f"cannot download {url}: {err} (does the VPC have NAT egress to it?)") from err
    return b"".join(chunks)


def archive_commit(archive: bytes) -> str | None:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        return tar.pax_headers.get("comment")


def verify_commit(archive: bytes, revision: str) -> None:
    """git archive records the commit id as the pax comment; a missing or different one is refused."""
    commit = archive_commit(archive)
    if commit != revision:
        found = f"of commit {commit}" if commit else "without a commit id"
        raise HelmReleaseError(f"chart archive is {found}, not of the pinned revision {revision}; refusing it")


def extract_chart(archive: bytes, target: Path) -> Path:
    """Extract only the chart folder, refusing links and paths that leave the target."""
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        members = [m for m in tar.getmembers() if _chart_relative(m.name) is not None]
        if not members:
            raise HelmReleaseError(f"the archive has no {CHART_PATH} folder")
        try:
            tar.extractall(target, members=members, filter="data")
        except tarfile.TarError as err:
            raise HelmReleaseError(f"refusing to extract the chart archive: {err}") from err
    top = members[0].name.split("/", 1)[0]
    chart = target / top / CHART_PATH
    if not (chart / "Chart.yaml").is_file():
        raise HelmReleaseError(f"{CHART_PATH}/Chart.yaml is missing from the archive")
    return chart


def _chart_relative(name: str) -> str | None:
    parts = name.split("/", 1)
    if len(parts) == 2 and (parts[1] == CHART_PATH or parts[1].startswith(CHART_PATH + "/")):
        return parts[1]
    return None


def verify_content(chart: Path, revision: str, content_sha256: str) -> None:
    try:
        digest = tree_sha256(chart)
    except ChartDigestError as err:
        raise HelmReleaseError(f"chart of revision {revision}: {err}") from err
    if digest != content_sha256:
        raise HelmReleaseError(f"chart folder of revision {revision} has content digest {digest}, but the config "
                               f"pins {content_sha256}; refusing to install it")


def fetch_chart(repository: str, revision: str, content_sha256: str, target: Path, budget: Budget) -> Path:
    """Download, check and extract the pinned chart folder."""
    archive = download(ARCHIVE_URL.format(repository=repository, revision=revision), budget)
    verify_commit(archive, revision)
    chart = extract_chart(archive, target)
    verify_content(chart, revision, content_sha256)
    return chart


# --- values -------------------------------------------------------------------------------------------

def merge_values(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """helm's coalescing of a values file over another: maps merge, anything else replaces, null removes."""
    merged = dict(base)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_values(merged[key], value)
        else:
            merged[key] = value
    return merged


def _lookup(values: dict[str, Any], path: str) -> Any:
    node: Any = values
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def dependency_enabled(dependency: dict[str, Any], values: dict[str, Any]) -> bool:
    """helm's rule: tags first (disabled only if a tag is false and none is true), then the first
    condition path that holds a boolean decides; no decision means enabled."""
    enabled = True
    tags = [values.get("tags", {}).get(tag) for tag in dependency.get("tags") or ()]
    if False in tags and True not in tags:
        enabled = False
    for path in str(dependency.get("condition") or "").split(","):
        value = _lookup(values, path.strip()) if path.strip() else None
        if isinstance(value, bool):
            return value
    return enabled


def is_local(dependency: dict[str, Any]) -> bool:
    return str(dependency.get("repository") or "").startswith("file://") or not dependency.get("repository")


# --- preparing the chart --------------------------------------------------------------------------------

@dataclass(frozen=True)
class PreparedChart:
    path: Path
    values_files: tuple[Path, ...]
    vendored: tuple[str, ...]
    dropped: tuple[str, ...]
    shadowed: tuple[str, ...] = ()  # archives in charts/ that duplicated a folder sub-chart, removed


def prepare_chart(chart: Path, region: str, kit_values: dict[str, Any], pins: dict[str, DependencyPin],
                  workdir: Path, budget: Budget) -> PreparedChart:
    """Vendor the enabled remote dependencies from their pins, drop the disabled ones, and return the
    chart with the values files helm gets (the region's files, then the kit's)."""
    regional = chart / "regional-values" / f"values-{region}.yaml"
    sub_charts = sorted(p.parent for p in (chart / "charts").glob("*/Chart.yaml"))
    sub_regional = [(sub, sub / "regional-values" / f"values-{region}.yaml") for sub in sub_charts]
    sub_regional = [(sub, path) for sub, path in sub_regional if path.is_file()]
    files = [chart / "Chart.yaml", chart / "values.yaml", *(p for p in [regional] if p.is_file()),
             *(sub / "Chart.yaml" for sub in sub_charts), *(path for _, path in sub_regional)]
    files = [path for path in files if path.is_file()]
    parsed = dict(zip(files, read_yaml_files(files, workdir, budget), strict=True))
    metadata = parsed[chart / "Chart.yaml"]
    if metadata.get("apiVersion") != "v2":
        raise HelmReleaseError(f"Chart.yaml has apiVersion {metadata.get('apiVersion')!r}; the installer reads v2 charts")

    # The region's values of each sub-chart, nested under the sub-chart's name so that helm applies them to it.
    values_files: list[Path] = [regional] if regional.is_file() else []
    layers = [parsed.get(chart / "values.yaml", {}), parsed.get(regional, {})]
    for sub, path in sub_regional:
        name = parsed[sub / "Chart.yaml"].get("name") or sub.name
        nested = workdir / f"nested-{name}-values-{region}.json"
        nested.write_text(json.dumps({name: parsed[path]}))
        values_files.append(nested)
        layers.append({name: parsed[path]})
    ours = workdir / "kit-values.json"
    ours.write_text(json.dumps(kit_values))
    values_files.append(ours)
    values: dict[str, Any] = {}
    for layer in [*layers, kit_values]:
        values = merge_values(values, layer)

    dependencies = list(metadata.get("dependencies") or [])
    names = {str(d.get("name")) for d in dependencies}
    stray = sorted(set(pins) - {str(d.get("name")) for d in dependencies if not is_local(d)})
    if stray:
        raise HelmReleaseError(f"the config pins {', '.join(stray)}, which the chart does not list as remote "
                               f"dependencies (it lists {', '.join(sorted(names))}); remove those pins")
    kept, vendored, dropped, downloads = [], [], [], []
    for dependency in dependencies:
        name = str(dependency.get("name"))
        enabled = dependency_enabled(dependency, values)
        if is_local(dependency):
            kept.append(dependency)
            if enabled:
                _refuse_remote_sub_dependencies(chart, dependency, parsed)
        elif not enabled:
            dropped.append(name)
        elif name not in pins:
            raise HelmReleaseError(f"remote dependency {name} {dependency.get('version')} from "
                                   f"{dependency.get('repository')} is enabled but not pinned; pin it in "
                                   "hyperpod.helm_chart.dependencies (hyperpod-kit chart-sha256 prints the pin) "
                                   "or disable it")
        else:
            kept.append(dependency)
            vendored.append(name)
            downloads.append((dependency, pins[name]))
    # Only a sub-chart Chart.yaml takes from a folder (file://charts/<name>) that is there shadows an archive: a
    # dependency without a repository is the archive itself (helm's form for a vendored chart).
    folders = {str(d.get("name")) for d in dependencies
               if str(d.get("repository") or "").startswith("file://")
               and (chart / str(d["repository"]).removeprefix("file://") / "Chart.yaml").is_file()}
    shadowed = _drop_shadowing_archives(chart, folders, workdir, budget)
    fetched = [_fetch_dependency(dependency, pin, chart / "charts", budget) for dependency, pin in downloads]
    for (dependency, _pin), (archive, inner) in zip(downloads, fetched, strict=True):
        _check_dependency_chart(dependency, archive, inner, workdir, budget)

    metadata["dependencies"] = kept
    # JSON is YAML: helm reads the rewritten files as it read the originals, minus the dropped entries.
    (chart / "Chart.yaml").write_text(json.dumps(metadata, indent=1))
    lock = chart / "Chart.lock"
    if lock.is_file():
        [lock_document] = read_yaml_files([lock], workdir, budget)
        lock_document["dependencies"] = [d for d in lock_document.get("dependencies") or []
                                         if d.get("name") not in dropped]
        lock.write_text(json.dumps(lock_document, indent=1))
    return PreparedChart(chart, tuple(values_files), tuple(vendored), tuple(dropped), shadowed)


def _drop_shadowing_archives(chart: Path, local_names: set[str], workdir: Path, budget: Budget) -> tuple[str, ...]:
    """Remove each packaged chart in charts/ named like a sub-chart Chart.yaml takes from a folder (file://).
    helm loads both and renders one or the other, varying from run to run: the pinned a00b22d ships
    charts/health-monitoring-agent-0.1.0.tgz, an older copy of the agent (one DaemonSet for every node type,
    without the non-NVIDIA twin) beside the folder Chart.yaml names; seen rendering either way with helm v4.1.4.
    The folder is the one Chart.yaml names, so the archive goes."""
    archives = sorted(p for p in (chart / "charts").glob("*.tgz") if p.is_file())
    sources = []
    for archive in archives:
        source = workdir / f"packaged-{archive.name}-Chart.yaml"
        source.write_text(_packaged_chart_yaml(archive, archive.name))
        sources.append(source)
    removed = []
    for archive, meta in zip(archives, read_yaml_files(sources, workdir, budget), strict=True):
        if str(meta.get("name")) in local_names:
            archive.unlink()
            removed.append(archive.name)
    return tuple(removed)


def _refuse_remote_sub_dependencies(chart: Path, dependency: dict[str, Any], parsed: dict[Path, Any]) -> None:
    folder = chart / str(dependency.get("repository") or "").removeprefix("file://")
    meta = parsed.get(folder / "Chart.yaml") or {}
    remote = [d for d in meta.get("dependencies") or [] if not is_local(d)]
    present = {p.name for p in (folder / "charts").glob("*")} if (folder / "charts").is_dir() else set()
    missing = [f"{d.get('name')} {d.get('version')}" for d in remote
               if not any(entry.startswith(f"{d.get('name')}-") or entry == d.get("name") for entry in present)]
    if missing:
        raise HelmReleaseError(f"sub-chart {dependency.get('name')} is enabled but needs remote charts the kit "
                               f"does not pin ({', '.join(missing)}); disable it in hyperpod.helm_chart.components")


def _fetch_dependency(dependency: dict[str, Any], pin: DependencyPin, charts: Path, budget: Budget) -> tuple[Path, str]:
    name, repository = str(dependency.get("name")), str(dependency.get("repository"))
    base = repository.rstrip("/") + "/"
    if not base.startswith("https://") or not pin.url.startswith(base):
        raise HelmReleaseError(f"the pin of {name} names {pin.url}, which is not in the repository Chart.yaml "
                               f"names ({repository}); the installer downloads only from https repositories")
    file_name = posixpath.basename(pin.url)
    if not TGZ_NAME.fullmatch(file_name):
        raise HelmReleaseError(f"the pin of {name} names {pin.url}; expected a packaged chart (.tgz)")
    data = download(pin.url, budget)
    digest = hashlib.sha256(data).hexdigest()
    if digest != pin.sha256:
        raise HelmReleaseError(f"dependency {name} from {pin.url} has SHA-256 {digest}, but the config pins "
                               f"{pin.sha256}; refusing to install it")
    path = charts / file_name
    path.write_bytes(data)
    return path, _packaged_chart_yaml(path, name)


def helm_archive_path(name: str) -> tuple[str, str]:
    """The top-level folder of a tar entry and where helm's archive loader puts it in the chart: the first
    path component dropped ("\\" is the separator when the name holds one), the rest cleaned
    (pkg/chart/loader/archive.go)."""
    top, *rest = name.split("\\" if "\\" in name else "/")
    return top, posixpath.normpath("/".join(rest) or ".")


def _packaged_chart_yaml(archive: Path, name: str) -> str:
    """The packaged chart's own Chart.yaml, as helm finds it. helm merges every top-level folder of the
    archive into one chart and keeps the last entry that lands on Chart.yaml; an archive with more than
    one top-level folder or more than one such entry is refused, so that the Chart.yaml checked here is
    the one helm loads."""
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            members = [m for m in tar.getmembers() if not m.isdir()]
            tops = {helm_archive_path(m.name)[0] for m in members}
            candidates = [m for m in members if helm_archive_path(m.name)[1] == "Chart.yaml"]
            if len(tops) > 1 or len(candidates) > 1:
                raise HelmReleaseError(f"dependency {name}: {archive.name} has {len(tops)} top-level folders and "
                                       f"{len(candidates)} entries helm would load as Chart.yaml; a packaged chart "
                                       "has one of each")
            if candidates and candidates[0].isfile():
                return tar.extractfile(candidates[0]).read().decode("utf-8-sig")
    except (tarfile.TarError, OSError, UnicodeDecodeError) as err:
        raise HelmReleaseError(f"dependency {name}: {archive.name} is not a packaged chart: {err}") from err
    raise HelmReleaseError(f"dependency {name}: {archive.name} holds no Chart.yaml")


def _check_dependency_chart(dependency: dict[str, Any], archive: Path, chart_yaml: str, workdir: Path,
                            budget: Budget) -> None:
    source = workdir / f"dependency-{archive.name}-Chart.yaml"
    source.write_text(chart_yaml)
    [meta] = read_yaml_files([source], workdir, budget)
    wanted = (str(dependency.get("name")), str(dependency.get("version")).removeprefix("v"))
    found = (str(meta.get("name")), str(meta.get("version")).removeprefix("v"))
    if found != wanted:
        raise HelmReleaseError(f"{archive.name} holds chart {found[0]} {found[1]}, but Chart.yaml asks for "
                               f"{wanted[0]} {wanted[1]}; refusing it")
