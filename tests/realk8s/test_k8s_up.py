"""`make k8s-up ENV=dev` as a developer runs it (python -m support.realk8s): its last line is KUBECONFIG=<path>,
and with that kubeconfig a member of team john creates the walkthrough's job (server-side dry run) and cannot
read team smith's namespace; `down` stops every process."""

from __future__ import annotations

import os
import subprocess
import sys

from support.cli_runner import run
from support.paths import ROOT


def _run(*args: str, extra_env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests"), **(extra_env or {})}
    return subprocess.run([sys.executable, "-m", "support.realk8s", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600, **kw)


def test_k8s_up_applies_dev_and_a_member_acts_as_the_team(tmp_path, k8s_bin):
    state = tmp_path / "dev"
    up = _run("up", "--env", "dev", "--dir", str(state))
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        last = up.stdout.strip().splitlines()[-1]
        assert last == f"KUBECONFIG={state / 'admin.kubeconfig'}"
        kubectl = [str(k8s_bin / "kubectl"), f"--kubeconfig={state / 'admin.kubeconfig'}",
                   "--as=alice", "--as-group=hyperpod-team-john"]
        job = run("job", "--config", "config/dev.yaml", "--team", "john", "--name", "fsdp", "--image", "repo/train:1",
                  "--nodes", "2", "--min-nodes", "1", "--max-nodes", "4", "--rdzv-backend", "etcd", "--", "python",
                  "train.py")
        assert job.returncode == 0, job.stderr
        created = subprocess.run([*kubectl, "create", "--dry-run=server", "-f", "-"], input=job.stdout,
                                 capture_output=True, text=True, timeout=120)
        assert created.returncode == 0, created.stderr
        assert "pytorchjob.kubeflow.org/fsdp created (server dry run)" in created.stdout
        foreign = subprocess.run([*kubectl, "get", "pods", "-n", "hyperpod-ns-smith"], capture_output=True,
                                 text=True, timeout=60)
        assert foreign.returncode == 1 and "Forbidden" in foreign.stderr
    finally:
        down = _run("down", "--env", "dev", "--dir", str(state))
    assert down.returncode == 0 and "stopped 3 process(es)" in down.stderr


def test_a_reused_state_dir_starts_empty_and_down_finds_binaries_behind_symlinks(tmp_path, k8s_bin):
    """up --env dev, down, then up --env prod in the same dir: prod has none of dev's namespaces. The binaries
    are reached through symlinks, which down must still recognise as its own processes."""
    links = tmp_path / "bin"
    links.mkdir()
    for binary in k8s_bin.iterdir():
        (links / binary.name).symlink_to(binary)
    state, env = tmp_path / "state", {"HYPERPOD_K8S_BIN_DIR": str(links)}
    for name in ("dev", "prod"):
        up = _run("up", "--env", name, "--dir", str(state), extra_env=env)
        assert up.returncode == 0, up.stderr[-3000:]
        if name == "prod":
            kubectl = [str(links / "kubectl"), f"--kubeconfig={state / 'admin.kubeconfig'}"]
            left = subprocess.run([*kubectl, "get", "namespace", "hyperpod-ns-john"], capture_output=True, text=True)
            assert left.returncode == 1 and "NotFound" in left.stderr, left.stdout
        down = _run("down", "--env", name, "--dir", str(state), extra_env=env)
        assert down.returncode == 0 and "stopped 3 process(es)" in down.stderr, down.stderr
