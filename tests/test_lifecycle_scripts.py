"""The node lifecycle scripts, run for real by bash against a fake root: a temporary folder stands in
for /, and small stand-ins for systemctl, mountpoint, mount, dnf and rpm on PATH record what they are
asked to do. shellcheck (Debian's package, unpacked by `make setup`) lints every script."""

from __future__ import annotations

import io
import os
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from cdk_app.config.loader import load_config
from cdk_app.stacks.cluster_stack import PROVISIONING_ENV, provisioning_env
from handlers import load_handler

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "lifecycle_scripts"
SHELLCHECK = ROOT / ".tools" / "shellcheck" / "usr" / "bin" / "shellcheck"

# Stand-ins: each appends its command line to $PROVISION_ROOT/.calls; mounts live in $PROVISION_ROOT/.mounts.
STUBS = {
    "systemctl": 'echo "systemctl $*" >> "$PROVISION_ROOT/.calls"; [[ "${FAIL_SYSTEMCTL:-}" != 1 ]]',
    "mountpoint": 'path="${*: -1}"; grep -qxF "$path" "$PROVISION_ROOT/.mounts" 2>/dev/null',
    "mount": 'echo "mount $*" >> "$PROVISION_ROOT/.calls"; echo "${*: -1}" >> "$PROVISION_ROOT/.mounts"',
    "dnf": 'echo "dnf $*" >> "$PROVISION_ROOT/.calls"; shift 2; printf "%s\\n" "$@" >> "$PROVISION_ROOT/.packages"',
    "rpm": 'grep -qxF "${*: -1}" "$PROVISION_ROOT/.packages" 2>/dev/null',
    "hostname": "echo node-1",
}
CONTAINERD_CONFIG = 'version = 2\nroot = "/var/lib/containerd"\n\n[plugins."io.containerd.grpc.v1.cri"]\n'


def scripts() -> list[Path]:
    return sorted(p for p in SCRIPTS.rglob("*.sh"))


def test_shellcheck_is_clean():
    assert SHELLCHECK.exists(), "run `make setup`: it unpacks Debian's shellcheck into .tools/"
    result = subprocess.run([str(SHELLCHECK), "--external-sources", *map(str, scripts())],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_script_on_create_runs_is_uploaded():
    """Users' classic failure: only on_create.sh uploaded while it calls helpers."""
    text = (SCRIPTS / "on_create.sh").read_text()
    called = set(re.findall(r'\$SCRIPT_DIR/([\w./-]+\.sh)', text))
    for step in list(called):
        called |= {str((Path(step).parent / m).as_posix()).replace("steps/../", "")
                   for m in re.findall(r'\$SCRIPT_DIR/([\w./-]+\.sh)', (SCRIPTS / step).read_text())}
    assert {"lib/common.sh", "steps/data_roots.sh", "steps/extra_packages.sh"} <= called
    sync = load_handler("scripts_sync_handler")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in SCRIPTS.rglob("*"):
            if path.is_file():
                archive.write(path, path.relative_to(SCRIPTS).as_posix())
    uploads, _ = sync.plan(sync.with_generated(sync.read_archive(buffer.getvalue()), {PROVISIONING_ENV: "X=1\n"}),
                           [], "lifecycle-scripts")
    assert {f"lifecycle-scripts/{name}" for name in called | {"on_create.sh", PROVISIONING_ENV}} <= set(uploads)


@pytest.fixture
def node(tmp_path):
    """A fake root with what an EKS node image has, the stand-ins on PATH, /opt/sagemaker mounted."""
    root = tmp_path / "root"
    (root / "etc/containerd").mkdir(parents=True)
    (root / "etc/containerd/config.toml").write_text(CONTAINERD_CONFIG)
    (root / "etc/fstab").write_text("UUID=abc / xfs defaults 0 0\n")
    (root / "var/lib/containerd/io.containerd.content.v1.content").mkdir(parents=True)
    (root / "var/lib/containerd/io.containerd.content.v1.content/blob").write_text("layer")
    (root / "var/lib/kubelet").mkdir(parents=True)
    (root / "var/lib/kubelet/kubeconfig").write_text("kubelet")
    (root / "opt/sagemaker").mkdir(parents=True)
    (root / ".mounts").write_text(f"{root}/opt/sagemaker\n")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name, body in STUBS.items():
        (stubs / name).write_text(f"#!/usr/bin/env bash\n{body}\n")
        (stubs / name).chmod(0o755)
    scripts_copy = tmp_path / "scripts"
    subprocess.run(["cp", "-a", str(SCRIPTS), str(scripts_copy)], check=True)
    return root, stubs, scripts_copy


def run(node, settings: str | None = None, **env: str) -> subprocess.CompletedProcess:
    root, stubs, scripts_copy = node
    if settings is not None:
        (scripts_copy / PROVISIONING_ENV).write_text(settings)
    environment = {"PATH": f"{stubs}{os.pathsep}/usr/bin:/bin", "PROVISION_ROOT": str(root), **env}
    return subprocess.run(["bash", str(scripts_copy / "on_create.sh")], env=environment, capture_output=True,
                          text=True, timeout=60)


def calls(root: Path) -> list[str]:
    path = root / ".calls"
    return path.read_text().splitlines() if path.exists() else []


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".calls" and "var/log" not in str(p)}


def test_first_run_moves_data_roots_to_the_secondary_volume(node):
    root = node[0]
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    config = (root / "etc/containerd/config.toml").read_text()
    assert 'root = "/opt/sagemaker/containerd/data-root"' in config and "[plugins." in config
    assert (root / "opt/sagemaker/containerd/data-root/io.containerd.content.v1.content/blob").read_text() == "layer"
    assert (root / "opt/sagemaker/kubelet/kubeconfig").read_text() == "kubelet"
    assert "/opt/sagemaker/kubelet /var/lib/kubelet none bind 0 0" in (root / "etc/fstab").read_text()
    assert calls(root) == ["systemctl stop containerd", "systemctl start containerd",
                           f"mount --bind {root}/opt/sagemaker/kubelet {root}/var/lib/kubelet"]
    log = (root / "var/log/provision/provisioning.log").read_text()
    assert "on_create.sh: done" in log and "step 'data roots on the secondary volume': done" in log
    assert log.strip().splitlines() == result.stdout.strip().splitlines()


def test_second_run_changes_nothing_and_succeeds(node):
    root = node[0]
    assert run(node).returncode == 0
    before, calls_before = tree(root), calls(root)
    second = run(node)
    assert second.returncode == 0, second.stdout + second.stderr
    assert tree(root) == before
    assert calls(root) == calls_before, "a second run must not restart containerd or mount again"
    assert "containerd already keeps its data" in second.stdout


def test_missing_secondary_volume_fails_with_its_message(node):
    root = node[0]
    (root / ".mounts").write_text("")
    result = run(node)
    assert result.returncode == 1
    assert "ERROR: /opt/sagemaker is not mounted" in result.stdout
    assert "step 'data roots on the secondary volume' failed" in result.stdout
    assert "on_create.sh: done" not in result.stdout
    assert "ERROR: /opt/sagemaker is not mounted" in (root / "var/log/provision/provisioning.log").read_text()


def test_failing_command_stops_the_run_with_the_step_named(node):
    result = run(node, FAIL_SYSTEMCTL="1")
    assert result.returncode == 1
    assert "step 'data roots on the secondary volume' failed (exit 1)" in result.stdout
    assert "step 'extra packages'" not in result.stdout


def test_missing_helper_is_named(node):
    (node[2] / "steps" / "extra_packages.sh").unlink()
    result = run(node)
    assert result.returncode == 1
    assert "steps/extra_packages.sh is missing (upload every file of lifecycle_scripts/)" in result.stdout


def test_settings_from_config_install_only_missing_packages_once(node, tmp_path):
    root = node[0]
    (root / ".packages").write_text("htop\n")
    config = tmp_path / "dev.yaml"
    config.write_text((ROOT / "config" / "dev.yaml").read_text().replace(
        "hyperpod:\n", "hyperpod:\n  lifecycle:\n    extra_packages: [htop, nvtop, iotop]\n", 1))
    settings = provisioning_env(load_config(config).config)
    first = run(node, settings)
    assert first.returncode == 0, first.stdout + first.stderr
    assert [c for c in calls(root) if c.startswith("dnf")] == ["dnf install -y nvtop iotop"]
    second = run(node, settings)
    assert second.returncode == 0
    assert [c for c in calls(root) if c.startswith("dnf")] == ["dnf install -y nvtop iotop"]
    assert "extra packages already installed: htop nvtop iotop" in second.stdout


def test_move_data_roots_off_leaves_the_node_alone(node):
    root = node[0]
    (root / ".mounts").write_text("")  # not even needed then
    result = run(node, "MOVE_DATA_ROOTS=false\nEXTRA_PACKAGES=''\n")
    assert result.returncode == 0, result.stdout
    assert calls(root) == []
    assert (root / "etc/containerd/config.toml").read_text() == CONTAINERD_CONFIG
