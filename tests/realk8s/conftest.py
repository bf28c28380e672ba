"""The real tier: a Kubernetes 1.33 control plane built from the Go module proxy (tests/k8s/controlplane), started
once per test worker and environment. Its binaries are built when the cache has none (make k8s-build does the
same ahead of time); a build that fails is an error of every test here, never a skip."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.case_configs import case_config
from support.kueue_oracle import OracleError, oracle_bin
from support.realk8s import controlplane, go_binary
from support.realk8s.api import Cluster
from support.realk8s.environment import apply_environment


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.realk8s)


@pytest.fixture(scope="session")
def k8s_bin() -> Path:
    try:
        return controlplane.resolve_bin_dir(None)
    except controlplane.UpError as err:
        pytest.fail(f"the real control plane could not be built: {err}")


@pytest.fixture(scope="session")
def oracle() -> Path:
    """kueue-oracle (tests/k8s/kueue), built when its cache has none; a failed build fails the test."""
    try:
        return oracle_bin() / "kueue-oracle"
    except OracleError as err:
        pytest.fail(f"kueue-oracle could not be built: {err}")


@pytest.fixture(scope="session")
def go() -> str:
    return go_binary()


# Module scope: a module's control planes stop when it ends, so a worker holds only those of the module it runs.
@pytest.fixture(scope="module")
def start_cluster(tmp_path_factory: pytest.TempPathFactory, k8s_bin: Path, go: str
                  ) -> Iterator[Callable[..., Cluster]]:
    """start_cluster(env, controllers=None): a running control plane with config/<env>.yaml (or a case config,
    support/case_configs.py) applied."""
    started: list[Path] = []

    def start(env: str, controllers: list[str] | None = None) -> Cluster:
        state = tmp_path_factory.mktemp(f"k8s-{env}")
        argv = ["up", "--dir", str(state), "--bin-dir", str(k8s_bin)]
        if controllers is not None:
            argv += ["--controllers", ",".join(controllers)]
        if controlplane.main(argv) != 0:
            pytest.fail(f"the control plane did not start; logs in {state}")
        started.append(state)
        config = case_config(env)
        apply_environment(config, k8s_bin / "kubectl", state / "admin.kubeconfig", go)
        return Cluster(state)

    yield start
    for state in started:
        controlplane.main(["down", "--dir", str(state)])
