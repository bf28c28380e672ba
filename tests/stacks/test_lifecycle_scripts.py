"""The node lifecycle scripts, run for real by bash against a fake root: a temporary folder stands in
for /, and small stand-ins for systemctl, mountpoint, mount, dnf and rpm on PATH record what they are
asked to do. shellcheck (Debian's package, unpacked by `make setup`) lints every script."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import tomllib
import zipfile
from pathlib import Path

import pytest
from support.handlers import load_handler
from support.paths import ROOT
from support.realk8s import go_binary

from cdk_app.config.loader import load_config
from cdk_app.stacks.cluster_stack import PROVISIONING_ENV, provisioning_env

SCRIPTS = ROOT / "lifecycle_scripts"
SHELLCHECK = ROOT / ".tools" / "shellcheck" / "usr" / "bin" / "shellcheck"

# Stand-ins: each appends its command line to $PROVISION_ROOT/.calls; mounts live in $PROVISION_ROOT/.mounts,
# running units in $PROVISION_ROOT/.active.
STUBS = {
    "systemctl": 'echo "systemctl $*" >> "$PROVISION_ROOT/.calls"; [[ "${FAIL_SYSTEMCTL:-}" != 1 ]] || exit 1\n'
                 'if [[ "$1" == is-active ]]; then grep -qxF "${*: -1}" "$PROVISION_ROOT/.active" 2>/dev/null; fi',
    "mountpoint": 'path="${*: -1}"; grep -qxF "$path" "$PROVISION_ROOT/.mounts" 2>/dev/null',
    "dnf": 'echo "dnf $*" >> "$PROVISION_ROOT/.calls"; shift 2; printf "%s\\n" "$@" >> "$PROVISION_ROOT/.packages"',
    "rpm": 'grep -qxF "${*: -1}" "$PROVISION_ROOT/.packages" 2>/dev/null',
    "hostname": "echo node-1",
    # The node's filter table as lines of rule arguments in $PROVISION_ROOT/.iptables (first line: first rule);
    # --check answers from it, --insert <chain> 1 puts a rule first. FAIL_IPTABLES=1: every call fails.
    "iptables": '[[ "${FAIL_IPTABLES:-}" != 1 ]] || exit 1; [[ "$1" != -w ]] || shift 2\n'
                'rules="$PROVISION_ROOT/.iptables"; touch "$rules"\n'
                'case "$1" in\n'
                '  --check) shift; grep -qxF -- "$*" "$rules" ;;\n'
                '  --insert) [[ "$3" == 1 ]] || exit 2; line="$2 ${*:4}"\n'
                '    { echo "$line"; cat "$rules"; } > "$rules.new" && mv "$rules.new" "$rules" ;;\n'
                '  *) exit 2 ;;\n'
                'esac',
    # The running kubelet's pid, when the test has one (its command line under $PROVISION_ROOT/proc/<pid>).
    "pgrep": '[[ -f "$PROVISION_ROOT/.kubelet_pid" ]] && cat "$PROVISION_ROOT/.kubelet_pid"',
}
# What the EKS node images ship, abridged: AL2's template that bootstrap.sh renders into
# /etc/containerd/config.toml (amazon-eks-ami, templates/al2), and the file nodeadm writes on AL2023.
AL2_TEMPLATE = """version = 2
root = "/var/lib/containerd"
state = "/run/containerd"

[grpc]
address = "/run/containerd/containerd.sock"

[plugins."io.containerd.grpc.v1.cri".containerd]
default_runtime_name = "runc"
discard_unpacked_layers = true

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
SystemdCgroup = true
"""
NODEADM_CONFIG = AL2_TEMPLATE.replace('default_runtime_name = "runc"', 'default_runtime_name = "nvidia"')
OS_RELEASE = {"al2": 'NAME="Amazon Linux"\nVERSION="2"\nID="amzn"\nID_LIKE="centos rhel fedora"\nVERSION_ID="2"\n',
              "al2023": 'NAME="Amazon Linux"\nVERSION="2023"\nID="amzn"\nID_LIKE="fedora"\nVERSION_ID="2023"\n',
              "ubuntu": 'NAME="Ubuntu"\nID=ubuntu\nVERSION_ID="22.04"\n'}
# /etc/nvidia-container-runtime/config.toml as the toolkit writes it by default (`nvidia-ctk config default`;
# NVIDIA/nvidia-container-toolkit, internal/config/toml_test.go "defaultConfig"), on AL2 and AL2023 alike.
TOOLKIT_DEFAULT = """#accept-nvidia-visible-devices-as-volume-mounts = false
#accept-nvidia-visible-devices-envvar-when-unprivileged = true
disable-require = false
supported-driver-capabilities = "compat32,compute,display,graphics,ngx,utility,video"
#swarm-resource = "DOCKER_RESOURCE_GPU"

[nvidia-container-cli]
#debug = "/var/log/nvidia-container-toolkit.log"
environment = []
#ldcache = "/etc/ld.so.cache"
ldconfig = "@/sbin/ldconfig"
load-kmods = true
#no-cgroups = false
#path = "/usr/bin/nvidia-container-cli"
#root = "/run/nvidia/driver"
#user = "root:video"

[nvidia-container-runtime]
#debug = "/var/log/nvidia-container-runtime.log"
log-level = "info"
mode = "auto"
runtimes = ["docker-runc", "runc"]

[nvidia-container-runtime.modes]

[nvidia-container-runtime.modes.cdi]
annotation-prefixes = ["cdi.k8s.io/"]
default-kind = "nvidia.com/gpu"
spec-dirs = ["/etc/cdi", "/var/run/cdi"]

[nvidia-container-runtime.modes.csv]
mount-spec-path = "/etc/nvidia-container-runtime/host-files-for-container.d"

[nvidia-container-runtime-hook]
path = "nvidia-container-runtime-hook"
skip-mode-detection = false

[nvidia-ctk]
path = "nvidia-ctk"
"""
TOOLKIT_CONFIG = "etc/nvidia-container-runtime/config.toml"
# The toolkit's names for the two settings (its Config struct's toml tags, as in the default above).
VOLUME_MOUNTS = "accept-nvidia-visible-devices-as-volume-mounts"
ENVVAR_UNPRIVILEGED = "accept-nvidia-visible-devices-envvar-when-unprivileged"
IGNORE_IMEX = "ignore-imex-channel-requests"  # a key of the [features] table (api/config/v1/features.go)
DATA_ROOT = "/opt/sagemaker/containerd/data-root"
DROP_IN = "etc/systemd/system/containerd.service.d/90-hyperpod-kit-data-root.conf"
# The seccomp step's calls after data_roots' own (it ends the run): on a node whose kubelet is not running yet,
# and on one where it is.
# (On a node with no kubelet config file yet, the step first asks whether a kubelet runs without one.)
SECCOMP_CALLS = ["systemctl is-active --quiet kubelet", "systemctl daemon-reload", "systemctl is-active --quiet kubelet"]
SECCOMP_CALLS_KUBELET_RUNNING = ["systemctl daemon-reload", "systemctl is-active --quiet kubelet",
                                 "systemctl restart kubelet"]


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
    assert {"lib/common.sh", "steps/gpu_device_isolation.sh", "steps/data_roots.sh", "steps/extra_packages.sh"} <= called
    sync = load_handler("scripts_sync_handler")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in SCRIPTS.rglob("*"):
            if path.is_file():
                archive.write(path, path.relative_to(SCRIPTS).as_posix())
    uploads, _ = sync.plan(sync.with_generated(sync.read_archive(buffer.getvalue()), {PROVISIONING_ENV: "X=1\n"}),
                           [], "lifecycle-scripts")
    assert {f"lifecycle-scripts/{name}" for name in called | {"on_create.sh", PROVISIONING_ENV}} <= set(uploads)


def make_node(tmp_path: Path, layout: str = "al2023", running: tuple[str, ...] = (),
              bootstrapped: bool = False, toolkit: str | None = None) -> tuple[Path, Path, Path]:
    """A fake root with what an EKS node image of `layout` has, the stand-ins on PATH, /opt/sagemaker mounted.
    bootstrapped (AL2): bootstrap.sh already rendered /etc/containerd/config.toml. toolkit: the NVIDIA
    container toolkit's config.toml of a GPU node; None: a node without the toolkit (CPU, Trainium)."""
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    if toolkit is not None:
        (root / TOOLKIT_CONFIG).parent.mkdir(parents=True)
        (root / TOOLKIT_CONFIG).write_text(toolkit)
    (root / "etc/os-release").write_text(OS_RELEASE[layout])
    if layout == "al2":
        (root / "etc/eks/containerd").mkdir(parents=True)
        (root / "etc/eks/containerd/containerd-config.toml").write_text(AL2_TEMPLATE)
        if bootstrapped:
            (root / "etc/containerd").mkdir()
            (root / "etc/containerd/config.toml").write_text(AL2_TEMPLATE)
    else:
        (root / "etc/containerd").mkdir()
        (root / "etc/containerd/config.toml").write_text(NODEADM_CONFIG)
    (root / "etc/fstab").write_text("UUID=abc / xfs defaults 0 0\n")
    (root / "var/lib/containerd/io.containerd.content.v1.content").mkdir(parents=True)
    (root / "var/lib/containerd/io.containerd.content.v1.content/blob").write_text("layer")
    (root / "var/lib/kubelet").mkdir(parents=True)
    (root / "var/lib/kubelet/kubeconfig").write_text("kubelet")
    (root / "opt/sagemaker").mkdir(parents=True)
    (root / ".mounts").write_text(f"{root}/opt/sagemaker\n")
    (root / ".active").write_text("".join(f"{unit}\n" for unit in running))
    if "kubelet" in running:  # a running kubelet has read its config file (where the node image's bootstrap puts it)
        path = root / KUBELET_CONFIG[layout if layout in KUBELET_CONFIG else "al2023"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(KUBELET_CONFIG_TEXT)
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name, body in STUBS.items():
        (stubs / name).write_text(f"#!/usr/bin/env bash\n{body}\n")
        (stubs / name).chmod(0o755)
    scripts_copy = tmp_path / "scripts"
    subprocess.run(["cp", "-a", str(SCRIPTS), str(scripts_copy)], check=True)
    return root, stubs, scripts_copy


@pytest.fixture
def node(tmp_path):
    return make_node(tmp_path)


# provisioning.env with the opt-in node-level GPU isolation switched on (the other settings at their defaults).
ISOLATION_ON = "GPU_DEVICE_ISOLATION=true\n"


def run(node, settings: str | None = None, **env: str) -> subprocess.CompletedProcess:
    root, stubs, scripts_copy = node
    if settings is not None:
        (scripts_copy / PROVISIONING_ENV).write_text(settings)
    environment = {"PATH": f"{stubs}{os.pathsep}/usr/bin:/bin", "PROVISION_ROOT": str(root),
                   "VOLUME_WAIT_SECONDS": "0", **env}
    return subprocess.run(["bash", str(scripts_copy / "on_create.sh")], env=environment, capture_output=True,
                          text=True, timeout=60)


def calls(root: Path) -> list[str]:
    path = root / ".calls"
    return path.read_text().splitlines() if path.exists() else []


def changes(root_or_calls: Path | list[str]) -> list[str]:
    """The calls that change something: all but the questions whether a unit runs."""
    made = calls(root_or_calls) if isinstance(root_or_calls, Path) else root_or_calls
    return [c for c in made if not c.startswith("systemctl is-active")]


def tree(root: Path) -> dict[str, str]:
    """Every file (content) and symlink (target) under the fake root, but the stand-ins' records and logs."""
    return {str(p.relative_to(root)): (f"-> {os.readlink(p)}" if p.is_symlink() else p.read_text())
            for p in sorted(root.rglob("*"))
            if (p.is_file() or p.is_symlink()) and p.name != ".calls" and "var/log" not in str(p)}


def without_root(text: str) -> dict:
    data = tomllib.loads(text)
    data.pop("root", None)
    return data


def assert_data_moved(root: Path) -> None:
    assert (root / DATA_ROOT.lstrip("/") / "io.containerd.content.v1.content/blob").read_text() == "layer"
    assert (root / "var/lib/kubelet").is_symlink() and os.readlink(root / "var/lib/kubelet") == "/opt/sagemaker/kubelet"
    assert (root / "opt/sagemaker/kubelet/kubeconfig").read_text() == "kubelet"
    assert (root / "etc/fstab").read_text() == "UUID=abc / xfs defaults 0 0\n", "no mount at boot to depend on"


def test_al2_before_bootstrap_sets_the_root_in_the_template_bootstrap_renders(tmp_path):
    """AWS's reference edits /etc/eks/containerd/containerd-config.toml on AL2; bootstrap.sh renders it later."""
    node = make_node(tmp_path, "al2")
    root = node[0]
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    template = (root / "etc/eks/containerd/containerd-config.toml").read_text()
    assert tomllib.loads(template)["root"] == DATA_ROOT
    assert without_root(template) == without_root(AL2_TEMPLATE), "every other setting stays"
    assert not (root / "etc/containerd/config.toml").exists(), "bootstrap.sh writes it, not the step"
    assert not (root / DROP_IN).exists()
    assert_data_moved(root)
    assert calls(root) == ["systemctl is-active --quiet containerd", "systemctl is-active --quiet kubelet",
                           *SECCOMP_CALLS]
    log = (root / "var/log/provision/provisioning.log").read_text()
    assert "node image: amzn-2" in log and "step 'data roots off the root volume': done" in log
    assert "on_create.sh: done" in log
    assert log.strip().splitlines() == result.stdout.strip().splitlines()


def test_al2_after_bootstrap_also_sets_the_rendered_config_and_restarts_containerd(tmp_path):
    node = make_node(tmp_path, "al2", running=("containerd",), bootstrapped=True)
    root = node[0]
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    for path in ("etc/eks/containerd/containerd-config.toml", "etc/containerd/config.toml"):
        assert tomllib.loads((root / path).read_text())["root"] == DATA_ROOT, path
    assert calls(root) == ["systemctl is-active --quiet containerd", "systemctl stop containerd",
                           "systemctl start containerd", "systemctl is-active --quiet kubelet", *SECCOMP_CALLS]
    assert_data_moved(root)


@pytest.mark.parametrize("template", [
    AL2_TEMPLATE.replace('root = "/var/lib/containerd"\n', '# root = "/var/lib/containerd"\n'),
    AL2_TEMPLATE.replace('root = "/var/lib/containerd"\n', ""),
    'version = 2\nstate = "/run/containerd"\n',
], ids=["commented-out", "absent", "no-tables"])
def test_al2_root_is_set_at_top_level_whatever_the_template_says(tmp_path, template):
    """A top-level key must come before the first [table]: TOML would put it inside the table otherwise."""
    node = make_node(tmp_path, "al2")
    path = node[0] / "etc/eks/containerd/containerd-config.toml"
    path.write_text(template)
    assert run(node).returncode == 0
    edited = tomllib.loads(path.read_text())
    assert edited["root"] == DATA_ROOT
    assert without_root(path.read_text()) == without_root(template)


def test_al2023_keeps_nodeadms_config_and_starts_containerd_with_the_root_on_the_volume(tmp_path):
    """nodeadm rewrites /etc/containerd/config.toml at every boot: the step leaves it alone and overrides
    containerd's root with a systemd drop-in, which systemd-analyze accepts for an AL2023-like unit."""
    node = make_node(tmp_path, "al2023", running=("containerd",))
    root = node[0]
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (root / "etc/containerd/config.toml").read_text() == NODEADM_CONFIG
    drop_in = (root / DROP_IN).read_text()
    assert f"ExecStart=/usr/bin/containerd --root {DATA_ROOT}\n" in drop_in
    assert calls(root) == ["systemctl is-active --quiet containerd", "systemctl stop containerd",
                           "systemctl daemon-reload", "systemctl start containerd",
                           "systemctl is-active --quiet kubelet", *SECCOMP_CALLS]
    assert_data_moved(root)
    # systemd's own verdict on the unit plus the drop-in, in a root of their own.
    units = tmp_path / "systemd-root"
    (units / "usr/bin").mkdir(parents=True)
    (units / "usr/bin/containerd").write_text("#!/bin/sh\n")
    (units / "usr/bin/containerd").chmod(0o755)
    (units / "usr/lib/systemd/system").mkdir(parents=True)
    (units / "usr/lib/systemd/system/containerd.service").write_text(
        "[Unit]\nDescription=containerd\nDefaultDependencies=no\n[Service]\nExecStart=/usr/bin/containerd\n")
    (units / DROP_IN).parent.mkdir(parents=True)
    (units / DROP_IN).write_text(drop_in)
    verify = subprocess.run(["systemd-analyze", "verify", f"--root={units}", "containerd.service"],
                            capture_output=True, text=True)
    assert verify.returncode == 0, verify.stderr


@pytest.mark.parametrize("layout,running", [("al2", ()), ("al2", ("containerd", "kubelet")), ("al2023", ()),
                                            ("al2023", ("containerd",))])
def test_second_run_changes_nothing_and_succeeds(tmp_path, layout, running):
    node = make_node(tmp_path, layout, running=running, bootstrapped=bool(running))
    root = node[0]
    first = run(node)
    assert first.returncode == 0, first.stdout + first.stderr
    before, calls_before = tree(root), calls(root)
    second = run(node)
    assert second.returncode == 0, second.stdout + second.stderr
    assert tree(root) == before
    assert changes(root) == changes(calls_before), "a second run must not restart containerd or kubelet"
    assert "containerd already keeps its data" in second.stdout
    assert "/var/lib/kubelet already points to /opt/sagemaker/kubelet" in second.stdout


def test_unknown_node_image_leaves_containerd_alone_with_a_warning(tmp_path):
    node = make_node(tmp_path, "ubuntu")
    root = node[0]
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING: node image 'ubuntu-22.04' is neither Amazon Linux 2 nor 2023" in result.stdout
    assert (root / "etc/containerd/config.toml").read_text() == NODEADM_CONFIG
    assert not (root / DROP_IN).exists() and not (root / DATA_ROOT.lstrip("/")).exists()


def test_data_another_node_image_left_on_the_volume_is_not_reused(tmp_path):
    """The secondary volume outlives an AL2 -> AL2023 image update; the reference starts afresh too."""
    node = make_node(tmp_path, "al2023")
    root = node[0]
    stale = root / DATA_ROOT.lstrip("/") / "stale-al2-snapshot"
    stale.parent.mkdir(parents=True)
    stale.write_text("al2")
    (root / "opt/sagemaker/.hyperpod-kit-data-roots-os").write_text("amzn-2\n")
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "written by node image amzn-2; starting afresh for amzn-2023" in result.stdout
    assert not stale.exists()
    assert_data_moved(root)


def test_missing_secondary_volume_fails_with_its_message(node):
    root = node[0]
    (root / ".mounts").write_text("")
    result = run(node)
    assert result.returncode == 1
    assert "ERROR: /opt/sagemaker is not mounted after 0s" in result.stdout
    assert "step 'data roots off the root volume' failed" in result.stdout
    assert "on_create.sh: done" not in result.stdout
    assert "ERROR: /opt/sagemaker is not mounted" in (root / "var/log/provision/provisioning.log").read_text()


def test_failing_command_stops_the_run_with_the_step_named(node):
    result = run(node, FAIL_SYSTEMCTL="1")
    assert result.returncode == 1
    assert "step 'data roots off the root volume' failed (exit 1)" in result.stdout
    assert "step 'extra packages'" not in result.stdout


def test_missing_helper_is_named(node):
    (node[2] / "steps" / "extra_packages.sh").unlink()
    result = run(node)
    assert result.returncode == 1
    assert "steps/extra_packages.sh is missing (upload every file of lifecycle_scripts/)" in result.stdout


DEV_LIFECYCLE = "  lifecycle: {gpu_device_isolation: true}\n"


def dev_with_lifecycle(**settings: object) -> str:
    """config/dev.yaml with `settings` in its hyperpod.lifecycle (which turns GPU isolation on)."""
    text = (ROOT / "config" / "dev.yaml").read_text()
    assert DEV_LIFECYCLE in text
    merged = {"gpu_device_isolation": True, **settings}
    flow = ", ".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in merged.items())
    return text.replace(DEV_LIFECYCLE, f"  lifecycle: {{{flow}}}\n", 1)


def test_settings_from_config_install_only_missing_packages_once(node, tmp_path):
    root = node[0]
    (root / ".packages").write_text("htop\n")
    config = tmp_path / "dev.yaml"
    config.write_text(dev_with_lifecycle(extra_packages="[htop, nvtop, iotop]"))
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
    result = run(node, "MOVE_DATA_ROOTS=false\nEXTRA_PACKAGES=''\nSECCOMP_DEFAULT=false\n")
    assert result.returncode == 0, result.stdout
    assert calls(root) == []
    assert (root / "etc/containerd/config.toml").read_text() == NODEADM_CONFIG


# --- GPU device isolation ---------------------------------------------------------------------------------

def without_device_keys(text: str) -> dict:
    data = tomllib.loads(text)
    data.pop(VOLUME_MOUNTS, None)
    data.pop(ENVVAR_UNPRIVILEGED, None)
    features = data.pop("features", {})
    features.pop(IGNORE_IMEX, None)
    if features:
        data["features"] = features
    return data


# The default of older toolkits (1.x before nvidia-ctk: the keys after disable-require), the keys absent, and
# the keys set to the permissive values outright.
OLDER_TOOLKIT = """disable-require = false
#swarm-resource = "DOCKER_RESOURCE_GPU"
#accept-nvidia-visible-devices-envvar-when-unprivileged = true
#accept-nvidia-visible-devices-as-volume-mounts = false

[nvidia-container-cli]
#root = "/run/nvidia/driver"
environment = []
load-kmods = true
ldconfig = "@/sbin/ldconfig"

[nvidia-container-runtime]
#debug = "/var/log/nvidia-container-runtime.log"
"""
ABSENT = "\n".join(line for line in TOOLKIT_DEFAULT.splitlines() if "accept-nvidia" not in line) + "\n"
PERMISSIVE = TOOLKIT_DEFAULT.replace(f"#{VOLUME_MOUNTS} = false", f"{VOLUME_MOUNTS} = false").replace(
    f"#{ENVVAR_UNPRIVILEGED} = true", f"{ENVVAR_UNPRIVILEGED} = true")


@pytest.mark.parametrize("layout", ["al2", "al2023"])
@pytest.mark.parametrize("toolkit", [TOOLKIT_DEFAULT, OLDER_TOOLKIT, ABSENT, PERMISSIVE],
                         ids=["default", "older-toolkit", "keys-absent", "keys-permissive"])
def test_gpu_node_toolkit_takes_devices_from_the_plugins_mounts_only(tmp_path, layout, toolkit):
    """Both settings land as top-level keys (tomllib's reading, not a text search), every other setting
    stays, and nothing is restarted: the toolkit reads the file at each container start."""
    node = make_node(tmp_path, layout, running=("containerd",), bootstrapped=layout == "al2", toolkit=toolkit)
    root = node[0]
    result = run(node, ISOLATION_ON)
    assert result.returncode == 0, result.stdout + result.stderr
    written = (root / TOOLKIT_CONFIG).read_text()
    config = tomllib.loads(written)
    assert config[VOLUME_MOUNTS] is True and config[ENVVAR_UNPRIVILEGED] is False
    assert config["features"][IGNORE_IMEX] is True
    assert without_device_keys(written) == without_device_keys(toolkit), "every other setting stays"
    assert [line for line in written.splitlines() if "accept-nvidia" in line] == [
        line for line in written.splitlines() if line.startswith("accept-nvidia")], "no stale commented copy"
    log = (root / "var/log/provision/provisioning.log").read_text()
    assert "GPUs from the device plugin's mounts only" in log
    assert log.index("step 'GPU device isolation': done") < log.index("step 'data roots off the root volume': start")
    # Only data_roots' own calls: the step restarts nothing.
    expected = {"al2": ["systemctl is-active --quiet containerd", "systemctl stop containerd",
                        "systemctl start containerd", "systemctl is-active --quiet kubelet"],
                "al2023": ["systemctl is-active --quiet containerd", "systemctl stop containerd",
                           "systemctl daemon-reload", "systemctl start containerd",
                           "systemctl is-active --quiet kubelet"]}[layout] + SECCOMP_CALLS
    assert calls(root) == expected


@pytest.mark.parametrize("layout", ["al2", "al2023"])
def test_gpu_isolation_second_run_changes_nothing(tmp_path, layout):
    node = make_node(tmp_path, layout, toolkit=TOOLKIT_DEFAULT)
    root = node[0]
    assert run(node, ISOLATION_ON).returncode == 0
    before, calls_before = tree(root), calls(root)
    second = run(node, ISOLATION_ON)
    assert second.returncode == 0, second.stdout + second.stderr
    assert tree(root) == before and changes(root) == changes(calls_before)
    assert ("the NVIDIA container toolkit already has these settings: IMEX channels from CDI only, GPUs from the "
            "device plugin's mounts only") in second.stdout


def test_node_without_the_toolkit_is_left_alone(node):
    """CPU and Trainium nodes: no toolkit config, nothing written, the run goes on."""
    root = node[0]
    result = run(node, ISOLATION_ON)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("no /etc/nvidia-container-runtime/config.toml and no nvidia-ctk or nvidia-container-runtime: no NVIDIA "
            "container toolkit on this node") in result.stdout
    assert not (root / "etc/nvidia-container-runtime").exists()


def toolkit_binary(node, name: str, writes_default: bool = True) -> None:
    """A stand-in for a toolkit binary on PATH; nvidia-ctk's answers --version and, unless told not to,
    `config default --output=FILE` with the toolkit's default config (an old one without the command fails)."""
    body = "echo 'NVIDIA Container Toolkit CLI version 1.18.0'\n"
    if name == "nvidia-ctk" and writes_default:
        body += ('if [[ "$1 $2" == "config default" ]]; then\n'
                 f'  cat > "${{3#--output=}}" <<\'EOF\'\n{TOOLKIT_DEFAULT}EOF\nfi\n')
    elif name == "nvidia-ctk":
        body += 'if [[ "$1" == config ]]; then echo "unknown command config" >&2; exit 1; fi\n'
    (node[1] / name).write_text(f"#!/usr/bin/env bash\n{body}")
    (node[1] / name).chmod(0o755)


@pytest.mark.parametrize("isolation", [ISOLATION_ON, "GPU_DEVICE_ISOLATION=false\n"], ids=["isolation", "no-isolation"])
def test_a_toolkit_without_its_config_gets_the_default_one_then_the_keys(node, isolation):
    """Red team round 3, F3 (issue 28): nvidia-ctk without config.toml is a GPU node whose toolkit runs on its
    defaults (the variable accepted from unprivileged containers), not a node without the toolkit."""
    root = node[0]
    toolkit_binary(node, "nvidia-ctk")
    result = run(node, isolation)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "nvidia-ctk is here but /etc/nvidia-container-runtime/config.toml is not: writing" in result.stdout
    written = (root / TOOLKIT_CONFIG).read_text()
    config = tomllib.loads(written)
    assert config["features"][IGNORE_IMEX] is True
    if isolation == ISOLATION_ON:
        assert config[VOLUME_MOUNTS] is True and config[ENVVAR_UNPRIVILEGED] is False
    assert without_device_keys(written) == without_device_keys(TOOLKIT_DEFAULT)
    assert oct((root / TOOLKIT_CONFIG).stat().st_mode & 0o777) == "0o644"
    assert not list((root / TOOLKIT_CONFIG).parent.glob("*.hyperpod-kit.new"))


@pytest.mark.parametrize("binary,writes_default", [("nvidia-container-runtime", True), ("nvidia-container-runtime-hook", True),
                                                   ("nvidia-ctk", False)],
                         ids=["runtime-only", "hook-only", "ctk-without-config-default"])
def test_a_toolkit_without_its_config_that_cannot_be_written_fails_isolation_closed(node, binary, writes_default):
    root = node[0]
    toolkit_binary(node, binary, writes_default)
    result = run(node, ISOLATION_ON)
    assert result.returncode != 0
    assert f"{binary} is here but /etc/nvidia-container-runtime/config.toml is not" in result.stdout
    assert "hyperpod.lifecycle.gpu_device_isolation: false" in result.stdout
    assert "step 'GPU device isolation' failed" in result.stdout
    assert not (root / TOOLKIT_CONFIG).exists()
    assert not list((root / TOOLKIT_CONFIG).parent.glob("*.hyperpod-kit.new"))
    # The opt-out named: the node joins, on the toolkit's defaults, said out loud.
    off = run(node, "GPU_DEVICE_ISOLATION=false\n")
    assert off.returncode == 0, off.stdout + off.stderr
    assert f"WARNING: {binary} is here but /etc/nvidia-container-runtime/config.toml is not" in off.stdout


@pytest.mark.parametrize("flag", [True, False])
def test_gpu_device_isolation_follows_the_config(tmp_path, flag):
    """The config's hyperpod.lifecycle.gpu_device_isolation, through the provisioning.env the kit writes."""
    node = make_node(tmp_path, "al2023", toolkit=TOOLKIT_DEFAULT)
    root = node[0]
    config = tmp_path / "dev.yaml"
    config.write_text(dev_with_lifecycle(gpu_device_isolation=flag))
    result = run(node, provisioning_env(load_config(config).config))
    assert result.returncode == 0, result.stdout + result.stderr
    if flag:
        assert tomllib.loads((root / TOOLKIT_CONFIG).read_text())[ENVVAR_UNPRIVILEGED] is False
    else:
        written = (root / TOOLKIT_CONFIG).read_text()
        assert without_device_keys(written) == tomllib.loads(TOOLKIT_DEFAULT)
        assert tomllib.loads(written)["features"] == {IGNORE_IMEX: True}, "IMEX channels are refused either way"
        assert "GPU_DEVICE_ISOLATION=false: GPUs as the node image's toolkit hands them out" in result.stdout


def test_gpu_device_isolation_is_off_unless_asked_for_and_the_samples_ask_for_it():
    """Off by default: turning it on changes the device plugin at once but the toolkit only on new nodes, so an
    environment deployed without it must not get it by an upgrade of the kit (config/model.py says why). The
    sample environments, like every new one `init` writes, turn it on."""
    for env in ("dev", "prod"):
        config = load_config(ROOT / "config" / f"{env}.yaml").config
        assert "GPU_DEVICE_ISOLATION=true\n" in provisioning_env(config)
    dev = load_config(ROOT / "config" / "dev.yaml").config
    default = dev.model_copy(update={"hyperpod": dev.hyperpod.model_copy(update={
        "lifecycle": type(dev.hyperpod.lifecycle)()})})
    assert "GPU_DEVICE_ISOLATION=false\n" in provisioning_env(default)


# --- seccomp RuntimeDefault through the kubelet ---------------------------------------------------------------

SECCOMP_HELPER = "usr/local/libexec/hyperpod-kit/kubelet-seccomp-default.sh"
KUBELET_DROP_IN = "etc/systemd/system/kubelet.service.d/90-hyperpod-kit-seccomp-default.conf"
# Where the node images' bootstrap writes the kubelet's config: nodeadm on AL2023
# (awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go: /etc/kubernetes/kubelet/config.json), bootstrap.sh
# on AL2 (/etc/kubernetes/kubelet/kubelet-config.json). Contents abridged from what they write.
KUBELET_CONFIG = {"al2023": "etc/kubernetes/kubelet/config.json", "al2": "etc/kubernetes/kubelet/kubelet-config.json"}
KUBELET_CONFIG_TEXT = json.dumps({
    "kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1", "address": "0.0.0.0",
    "authentication": {"anonymous": {"enabled": False}, "webhook": {"cacheTTL": "2m0s", "enabled": True}},
    "cgroupDriver": "systemd", "clusterDomain": "cluster.local", "maxPods": 737,
    "featureGates": {"RotateKubeletServerCertificate": True}, "serverTLSBootstrap": True}, indent=4)
# The AL2023 image's kubelet unit (amazon-eks-ami templates/al2023/runtime/rootfs/etc/systemd/system/kubelet.service).
KUBELET_UNIT = """[Unit]
Description=Kubernetes Kubelet
After=containerd.service
Wants=containerd.service

[Service]
EnvironmentFile=/etc/eks/kubelet/environment
ExecStartPre=/sbin/iptables -P FORWARD ACCEPT -w 5
ExecStart=/usr/bin/kubelet $NODEADM_KUBELET_ARGS
Restart=on-failure
KillMode=process

[Install]
WantedBy=multi-user.target
"""


def kubelet_node(tmp_path: Path, layout: str, running: tuple[str, ...] = (), config: str | None = KUBELET_CONFIG_TEXT):
    node = make_node(tmp_path, layout, running=running, bootstrapped=layout == "al2" and bool(running))
    path = node[0] / KUBELET_CONFIG[layout]
    if config is None:
        path.unlink(missing_ok=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(config)
    return node


def test_the_kubelets_field_is_seccompDefault_in_its_own_types():
    """The key the helper writes, as the kubelet of the kit's Kubernetes version declares it (k8s.io/kubelet
    v0.33.13, from the Go module cache `make k8s-build` fills)."""
    modules = subprocess.run([go_binary(), "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    types = Path(modules) / "k8s.io" / "kubelet@v0.33.13" / "config" / "v1beta1" / "types.go"
    assert types.exists(), f"{types}: run `make k8s-build`"
    assert re.search(r'^\s*SeccompDefault \*bool `json:"seccompDefault,omitempty"`', types.read_text(), re.M)


@pytest.mark.parametrize("layout", ["al2", "al2023"])
def test_kubelet_gets_seccomp_default_now_and_before_every_start(tmp_path, layout):
    """The config file gets seccompDefault: true and nothing else changes; the helper is installed and a
    kubelet.service drop-in runs it before each start; a running kubelet is restarted once."""
    node = kubelet_node(tmp_path, layout, running=("containerd", "kubelet"))
    root = node[0]
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    written = json.loads((root / KUBELET_CONFIG[layout]).read_text())
    assert written.pop("seccompDefault") is True
    assert written == json.loads(KUBELET_CONFIG_TEXT), "every other setting stays"
    assert os.access(root / SECCOMP_HELPER, os.X_OK)
    assert (root / SECCOMP_HELPER).read_text() == (SCRIPTS / "lib/kubelet_seccomp_default.sh").read_text()
    # No leading "-" (red team round 2, F4): a helper that cannot set the key keeps the kubelet down.
    assert f"ExecStartPre=/{SECCOMP_HELPER}\n" in (root / KUBELET_DROP_IN).read_text()
    assert calls(root)[-3:] == SECCOMP_CALLS_KUBELET_RUNNING
    assert calls(root).count("systemctl restart kubelet") == 1
    assert "step 'seccomp RuntimeDefault for every pod': done" in result.stdout


def test_kubelet_drop_in_is_accepted_by_systemd_beside_the_images_unit(tmp_path):
    """systemd's own verdict on the AL2023 kubelet unit plus the kit's drop-ins and helpers."""
    node = kubelet_node(tmp_path, "al2023")
    root = node[0]
    assert run(node).returncode == 0
    units = tmp_path / "systemd-root"
    for binary in ("usr/bin/kubelet", "sbin/iptables"):
        (units / binary).parent.mkdir(parents=True, exist_ok=True)
        (units / binary).write_text("#!/bin/sh\n")
        (units / binary).chmod(0o755)
    (units / "etc/eks/kubelet").mkdir(parents=True)
    (units / "etc/eks/kubelet/environment").write_text("NODEADM_KUBELET_ARGS=--config=/etc/kubernetes/kubelet/config.json\n")
    (units / "usr/lib/systemd/system").mkdir(parents=True)
    # The verifying root holds no sysinit.target: the unit does without default dependencies there.
    (units / "usr/lib/systemd/system/kubelet.service").write_text(
        KUBELET_UNIT.replace("[Unit]\n", "[Unit]\nDefaultDependencies=no\n"))
    (units / "usr/lib/systemd/system/containerd.service").write_text(
        "[Unit]\nDefaultDependencies=no\n[Service]\nExecStart=/usr/bin/kubelet\n")
    for path in (KUBELET_DROP_IN, SECCOMP_HELPER, IMDS_DROP_IN, IMDS_HELPER):
        (units / path).parent.mkdir(parents=True, exist_ok=True)
        (units / path).write_bytes((root / path).read_bytes())
        (units / path).chmod((root / path).stat().st_mode)
    verify = subprocess.run(["systemd-analyze", "verify", f"--root={units}", "kubelet.service"],
                            capture_output=True, text=True)
    # systemd only warns (exit 0) about unknown keys and commands it ignores: no warning at all either.
    assert verify.returncode == 0 and verify.stderr == "", verify.stderr


def test_helper_sets_the_key_again_after_the_bootstrap_rewrote_the_config(tmp_path):
    """nodeadm writes config.json again at every boot: the helper the drop-in runs puts the key back."""
    node = kubelet_node(tmp_path, "al2023")
    root = node[0]
    assert run(node).returncode == 0
    (root / KUBELET_CONFIG["al2023"]).write_text(KUBELET_CONFIG_TEXT)  # the next boot
    again = subprocess.run(["bash", str(root / SECCOMP_HELPER)], env={"PROVISION_ROOT": str(root), "PATH": "/usr/bin:/bin"},
                           capture_output=True, text=True, timeout=30)
    assert again.returncode == 0, again.stderr
    assert json.loads((root / KUBELET_CONFIG["al2023"]).read_text())["seccompDefault"] is True


@pytest.mark.parametrize("layout", ["al2", "al2023"])
def test_seccomp_second_run_changes_nothing(tmp_path, layout):
    node = kubelet_node(tmp_path, layout, running=("containerd", "kubelet"))
    root = node[0]
    assert run(node).returncode == 0
    before, calls_before = tree(root), calls(root)
    second = run(node)
    assert second.returncode == 0, second.stdout + second.stderr
    assert tree(root) == before and changes(root) == changes(calls_before)
    assert "the kubelet already starts with seccompDefault" in second.stdout


def boot_helper(node, **env: str) -> subprocess.CompletedProcess:
    """The seccomp helper as kubelet.service's ExecStartPre runs it at a start (systemd's environment: env)."""
    root, stubs, _ = node
    return subprocess.run(["bash", str(root / SECCOMP_HELPER)],
                          env={"PROVISION_ROOT": str(root), "PATH": f"{stubs}:/usr/bin:/bin", **env},
                          capture_output=True, text=True, timeout=30)


def test_kubelet_config_not_written_yet_is_set_at_the_kubelets_start_or_keeps_it_down(tmp_path):
    """The kubelet does not run yet and its config is not written: the step warns, naming the setting; at the
    kubelet's start the helper sets the file that is there by then, and with none it fails (no leading "-":
    the kubelet stays down instead of running pods Unconfined)."""
    node = kubelet_node(tmp_path, "al2023", config=None)
    root = node[0]
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING: no kubelet config file yet" in result.stdout
    assert "hyperpod.lifecycle.seccomp_default: false" in result.stdout
    assert f"ExecStartPre=/{SECCOMP_HELPER}\n" in (root / KUBELET_DROP_IN).read_text()
    nothing = boot_helper(node)
    assert nothing.returncode == 3
    assert "no kubelet config file found" in nothing.stderr and "hyperpod.lifecycle.seccomp_default: false" in nothing.stderr
    (root / KUBELET_CONFIG["al2023"]).parent.mkdir(parents=True, exist_ok=True)
    (root / KUBELET_CONFIG["al2023"]).write_text(KUBELET_CONFIG_TEXT)  # nodeadm wrote it before the start
    assert boot_helper(node).returncode == 0
    assert json.loads((root / KUBELET_CONFIG["al2023"]).read_text())["seccompDefault"] is True


def test_the_config_the_kubelet_is_started_with_is_set_before_it_starts(tmp_path):
    """Before a start no kubelet runs to name its config: the helper reads --config from the start arguments -
    nodeadm's environment file on AL2023 (NODEADM_KUBELET_ARGS, amazon-eks-ami nodeadm/internal/kubelet/
    environment.go; a later flag wins) and the variables systemd hands it (KUBELET_EXTRA_ARGS on AL2)."""
    node = kubelet_node(tmp_path, "al2023", config=None)
    root = node[0]
    (root / "etc/kubelet-custom").mkdir(parents=True)
    (root / "etc/kubelet-custom/kc.json").write_text(KUBELET_CONFIG_TEXT)
    (root / "etc/eks/kubelet").mkdir(parents=True)
    (root / "etc/eks/kubelet/environment").write_text(
        "NODEADM_KUBELET_ARGS=--node-ip=10.1.2.3 --config=/etc/kubernetes/kubelet/config.json --config=/etc/kubelet-custom/kc.json\n")
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads((root / "etc/kubelet-custom/kc.json").read_text())["seccompDefault"] is True
    (root / "etc/eks/kubelet/environment").unlink()
    (root / "etc/other.json").write_text(KUBELET_CONFIG_TEXT)
    assert boot_helper(node, KUBELET_EXTRA_ARGS="--v=2 --config /etc/other.json").returncode == 0
    assert json.loads((root / "etc/other.json").read_text())["seccompDefault"] is True


def test_a_config_the_kubelet_is_started_with_that_does_not_exist_keeps_it_down(tmp_path):
    """The images' own file is there, but the kubelet would read another: setting the first would leave the
    kubelet Unconfined, so the helper fails, naming the file and the setting."""
    node = kubelet_node(tmp_path, "al2023")
    assert run(node).returncode == 0
    result = boot_helper(node, NODEADM_KUBELET_ARGS="--config=/var/lib/kubelet/config.yaml")
    assert result.returncode == 3
    assert "--config /var/lib/kubelet/config.yaml, which does not exist" in result.stderr
    assert "hyperpod.lifecycle.seccomp_default: false" in result.stderr


@pytest.mark.parametrize("settings,step", [
    ("", "pods' instance metadata dropped"),
    ("BLOCK_POD_IMDS=false\n", "seccomp RuntimeDefault for every pod")])
def test_a_kubelet_drop_in_that_cannot_be_written_fails_the_step(tmp_path, settings, step):
    """Red team round 2, F3: the setting would hold for this boot only (the rule, the key nodeadm rewrites), so a
    drop-in that cannot be written - here a file where its folder should be - fails the node's creation."""
    node = kubelet_node(tmp_path, "al2023", running=("kubelet",))
    root = node[0]
    (root / "etc/systemd/system").mkdir(parents=True)
    (root / "etc/systemd/system/kubelet.service.d").write_text("not a folder")
    result = run(node, settings)
    assert result.returncode != 0
    assert "cannot create the folder of the kubelet drop-in /etc/systemd/system/kubelet.service.d/" in result.stdout + result.stderr
    assert f"step '{step}' failed" in result.stdout + result.stderr


@pytest.mark.parametrize("config", ["{not json", "[1, 2]"], ids=["not-json", "not-an-object"])
def test_unreadable_kubelet_config_fails_the_step_loudly(tmp_path, config):
    """The node would join without the default: the lifecycle run fails, naming the file, and the file stays."""
    node = kubelet_node(tmp_path, "al2023", config=config)
    root = node[0]
    result = run(node)
    assert result.returncode != 0
    assert "/etc/kubernetes/kubelet/config.json" in result.stdout + result.stderr
    assert "step 'seccomp RuntimeDefault for every pod' failed" in result.stdout + result.stderr
    assert (root / KUBELET_CONFIG["al2023"]).read_text() == config


def test_seccomp_default_off_leaves_the_kubelet_alone(tmp_path):
    node = kubelet_node(tmp_path, "al2023", running=("kubelet",))
    root = node[0]
    result = run(node, "SECCOMP_DEFAULT=false\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (root / KUBELET_CONFIG["al2023"]).read_text() == KUBELET_CONFIG_TEXT
    assert not (root / KUBELET_DROP_IN).exists() and not (root / SECCOMP_HELPER).exists()
    assert "systemctl restart kubelet" not in calls(root)


@pytest.mark.parametrize("key", ["seccomp_default", "block_pod_imds"])
@pytest.mark.parametrize("flag", [True, False, None])
def test_node_hardening_follows_the_config_and_is_on_by_default(tmp_path, key, flag):
    text = dev_with_lifecycle() if flag is None else dev_with_lifecycle(**{key: flag})
    config = tmp_path / "dev.yaml"
    config.write_text(text)
    expected = "false" if flag is False else "true"
    assert f"{key.upper()}={expected}\n" in provisioning_env(load_config(config).config)


def test_a_running_kubelet_with_no_config_file_the_kit_knows_fails_the_step(tmp_path):
    """It would stay Unconfined: the lifecycle run fails, naming the way out."""
    node = kubelet_node(tmp_path, "al2023", running=("kubelet",), config=None)
    result = run(node)
    assert result.returncode != 0
    assert "the kubelet runs, but with no config file the kit knows" in result.stdout + result.stderr
    assert "hyperpod.lifecycle.seccomp_default: false" in result.stdout + result.stderr


def test_the_config_file_the_running_kubelet_names_is_the_one_set(tmp_path):
    node = kubelet_node(tmp_path, "al2023", running=("kubelet",), config=None)
    root = node[0]
    (root / "etc/kubelet-custom").mkdir(parents=True)
    (root / "etc/kubelet-custom/kc.json").write_text(KUBELET_CONFIG_TEXT)
    (root / "proc/4242").mkdir(parents=True)
    (root / "proc/4242/cmdline").write_bytes(b"/usr/bin/kubelet\0--config\0/etc/kubelet-custom/kc.json\0--v=2\0")
    (root / ".kubelet_pid").write_text("4242\n")
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads((root / "etc/kubelet-custom/kc.json").read_text())["seccompDefault"] is True
    assert calls(root)[-3:] == SECCOMP_CALLS_KUBELET_RUNNING


def test_a_config_reset_since_the_last_run_is_set_again_and_the_kubelet_restarted(tmp_path):
    node = kubelet_node(tmp_path, "al2023", running=("kubelet",))
    root = node[0]
    assert run(node).returncode == 0
    (root / KUBELET_CONFIG["al2023"]).write_text(KUBELET_CONFIG_TEXT.replace("{", '{"seccompDefault": false,', 1))
    before = calls(root).count("systemctl restart kubelet")
    again = run(node)
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads((root / KUBELET_CONFIG["al2023"]).read_text())["seccompDefault"] is True
    assert calls(root).count("systemctl restart kubelet") == before + 1


def test_nodeadms_drop_in_folder_gets_the_kits_drop_in_last(tmp_path):
    """Where nodeadm passes --config-dir, its 40-nodeadm.conf overrides config.json: the kit's 99- file comes
    after it (the kubelet merges drop-ins in name order)."""
    node = kubelet_node(tmp_path, "al2023")
    root = node[0]
    folder = root / "etc/kubernetes/kubelet/config.json.d"
    folder.mkdir()
    (folder / "40-nodeadm.conf").write_text('{"kind": "KubeletConfiguration", "seccompDefault": false}')
    assert run(node).returncode == 0
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["40-nodeadm.conf", "99-hyperpod-kit-seccomp-default.conf"]
    drop_in = json.loads((folder / names[-1]).read_text())
    assert drop_in == {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                       "seccompDefault": True}


def test_a_utf8_bom_before_the_first_table_does_not_move_the_keys_into_it(tmp_path):
    """With a byte-order mark the first [table] header no longer starts its line: the keys must still land at
    the top level (tomllib's reading), not in [nvidia-container-cli]."""
    node = make_node(tmp_path, "al2023", toolkit="\ufeff[nvidia-container-cli]\nldconfig = \"@/sbin/ldconfig\"\n")
    root = node[0]
    assert run(node, ISOLATION_ON).returncode == 0
    config = tomllib.loads((root / TOOLKIT_CONFIG).read_text())
    assert config[VOLUME_MOUNTS] is True and config[ENVVAR_UNPRIVILEGED] is False
    assert VOLUME_MOUNTS not in config["nvidia-container-cli"]


@pytest.mark.parametrize("version,warned", [("1.17.4", True), ("1.18.0", False), ("1.19.1", False), (None, True)])
def test_a_toolkit_older_than_the_imex_key_is_said_out_loud(tmp_path, version, warned):
    node = make_node(tmp_path, "al2023", toolkit=TOOLKIT_DEFAULT)
    if version is not None:
        ctk = node[1] / "nvidia-ctk"
        ctk.write_text(f"#!/usr/bin/env bash\necho 'NVIDIA Container Toolkit CLI version {version}'\necho 'commit: abc'\n")
        ctk.chmod(0o755)
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    assert any("WARNING" in line and "IMEX" in line for line in result.stdout.splitlines()) is warned


NVME_DEVICE = "dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS1A2B3C4D5E6F7G8H9"


def test_an_instance_store_takes_the_data_roots_so_empty_dirs_are_local_nvme(tmp_path):
    """Where the instance has NVMe instance storage and HyperPod mounted it (/opt/dlami/nvme, as AWS's reference
    lifecycle scripts name it), containerd's root and the kubelet's directory - every emptyDir - go there."""
    node = make_node(tmp_path, "al2023")
    root = node[0]
    (root / NVME_DEVICE).parent.mkdir(parents=True)
    (root / NVME_DEVICE).write_text("")
    (root / "opt/dlami/nvme").mkdir(parents=True)
    (root / ".mounts").write_text(f"{root}/opt/dlami/nvme\n")  # no EBS volume needed then
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "instance store (1 NVMe device(s)) mounted at /opt/dlami/nvme: data roots go there" in result.stdout
    assert "ExecStart=/usr/bin/containerd --root /opt/dlami/nvme/containerd/data-root\n" in (root / DROP_IN).read_text()
    assert os.readlink(root / "var/lib/kubelet") == "/opt/dlami/nvme/kubelet"
    assert (root / "opt/dlami/nvme/kubelet/kubeconfig").read_text() == "kubelet"
    assert (root / "opt/dlami/nvme/containerd/data-root/io.containerd.content.v1.content/blob").read_text() == "layer"


def test_an_instance_store_hyperpod_did_not_mount_leaves_the_data_roots_on_ebs_with_a_warning(tmp_path):
    node = make_node(tmp_path, "al2023")
    root = node[0]
    (root / NVME_DEVICE).parent.mkdir(parents=True)
    (root / NVME_DEVICE).write_text("")
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING: the instance has 1 NVMe instance-store device(s) but /opt/dlami/nvme is not mounted" in result.stdout
    assert_data_moved(root)


# Pods' instance metadata: the rule of the EKS user guide ("Restricting access to Amazon EC2 instance profile
# credentials"), as the stand-in iptables stores it.
IMDS_RULE = "FORWARD --in-interface eni+ --destination 169.254.169.254/32 --jump DROP"
IMDS_HELPER = "usr/local/libexec/hyperpod-kit/pod-imds-block.sh"
IMDS_DROP_IN = "etc/systemd/system/kubelet.service.d/80-hyperpod-kit-pod-imds-block.conf"


def iptables_rules(root: Path) -> list[str]:
    path = root / ".iptables"
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.parametrize("layout", ["al2", "al2023"])
def test_pods_instance_metadata_is_dropped_now_and_before_every_kubelet_start(tmp_path, layout):
    """One FORWARD rule from the pods' eni+ interfaces (routed traffic), put first; OUTPUT, which the node's
    own processes and host-network pods (aws-node, kube-proxy, the Pod Identity agent) use, is not touched."""
    node = kubelet_node(tmp_path, layout, running=("containerd", "kubelet"))
    root = node[0]
    (root / ".iptables").write_text("FORWARD -j KUBE-FORWARD\nOUTPUT -j KUBE-SERVICES\n")
    result = run(node)
    assert result.returncode == 0, result.stdout + result.stderr
    assert iptables_rules(root) == [IMDS_RULE, "FORWARD -j KUBE-FORWARD", "OUTPUT -j KUBE-SERVICES"]
    assert (root / IMDS_HELPER).read_text() == (SCRIPTS / "lib/pod_imds_block.sh").read_text()
    assert os.access(root / IMDS_HELPER, os.X_OK)
    # No leading "-": a kubelet whose rule cannot be set does not start.
    assert f"ExecStartPre=/{IMDS_HELPER}\n" in (root / IMDS_DROP_IN).read_text()
    assert "step 'pods' instance metadata dropped': done" in result.stdout
    assert result.stdout.index("pods' instance metadata dropped") < result.stdout.index("GPU device isolation")


def test_pods_instance_metadata_second_run_and_a_reboot_add_no_second_rule(tmp_path):
    node = kubelet_node(tmp_path, "al2023", running=("kubelet",))
    root = node[0]
    assert run(node).returncode == 0
    before = tree(root)
    second = run(node)
    assert second.returncode == 0, second.stdout + second.stderr
    assert tree(root) == before and iptables_rules(root) == [IMDS_RULE]
    assert "pods' instance metadata is already dropped" in second.stdout
    # A reboot empties the table; the kubelet's drop-in runs the helper before the kubelet starts.
    (root / ".iptables").write_text("")
    boot = subprocess.run(["bash", str(root / IMDS_HELPER)], env={"PROVISION_ROOT": str(root), "PATH": f"{node[1]}:/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=30)
    assert boot.returncode == 0, boot.stderr
    assert iptables_rules(root) == [IMDS_RULE]


def test_a_node_without_iptables_fails_the_step_naming_the_setting(tmp_path):
    node = kubelet_node(tmp_path, "al2023")
    (node[1] / "iptables").unlink()
    assert subprocess.run(["bash", "-c", "command -v iptables"], env={"PATH": "/usr/bin:/bin"}).returncode != 0, \
        "this test needs a machine without iptables on /usr/bin:/bin"
    result = run(node)
    assert result.returncode != 0
    assert "step 'pods' instance metadata dropped' failed" in result.stdout + result.stderr
    assert "hyperpod.lifecycle.block_pod_imds: false" in result.stdout + result.stderr


def test_an_iptables_failure_fails_the_step(tmp_path):
    node = kubelet_node(tmp_path, "al2023")
    result = run(node, FAIL_IPTABLES="1")
    assert result.returncode != 0
    assert "could not add the iptables rule dropping pods' instance metadata" in result.stdout + result.stderr


def test_block_pod_imds_off_leaves_the_node_alone(tmp_path):
    node = kubelet_node(tmp_path, "al2023", running=("kubelet",))
    root = node[0]
    result = run(node, "BLOCK_POD_IMDS=false\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert iptables_rules(root) == []
    assert not (root / IMDS_DROP_IN).exists() and not (root / IMDS_HELPER).exists()


def test_hyperpod_instance_groups_take_no_metadata_options():
    """Why the block is on the node: CreateCluster's instance group (botocore's SageMaker model) has no field
    for the instance metadata options (IMDSv2 only, hop limit 1) that would keep pods off IMDS by themselves."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    members = model.shape_for("ClusterInstanceGroupSpecification").members
    assert "InstanceCount" in members
    assert not [name for name in members if "metadata" in name.lower() or "hop" in name.lower()]
