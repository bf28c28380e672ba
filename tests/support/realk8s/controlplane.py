"""Start and stop a real Kubernetes 1.33 control plane on loopback, for tests and `make k8s-up`.

    python -m support.realk8s.controlplane up   --dir DIR [--bin-dir BIN] [--timeout SECONDS]
    python -m support.realk8s.controlplane down --dir DIR

`up` runs etcd, kube-apiserver and kube-controller-manager on 127.0.0.1
(random free ports), generates a CA, serving and client certificates and a
service-account signing key with the openssl CLI, waits until /readyz is ok
and the default namespace and its default ServiceAccount exist, writes
DIR/state.json and DIR/admin.kubeconfig, and prints `KUBECONFIG=<path>` as its
last line. Logs go to DIR/<component>.log. The binaries come from --bin-dir,
else $HYPERPOD_K8S_BIN_DIR, else the last line printed by
tests/k8s/controlplane/build.sh (which builds them from the Go module proxy when its cache has none).

`down` stops the processes recorded in DIR/state.json (one process group) and
removes nothing.

Python 3.11 standard library only, plus the `openssl` command.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from support.realk8s import go_binary

BUILD_SCRIPT = Path(__file__).resolve().parents[2] / "k8s" / "controlplane" / "build.sh"

# Service network: EKS's default service CIDR; the first address is the
# in-cluster `kubernetes` Service, so it goes into the serving cert.
SERVICE_CIDR = "10.100.0.0/16"
KUBERNETES_SERVICE_IP = "10.100.0.1"
SA_ISSUER = "https://kubernetes.default.svc.cluster.local"

# The admission controllers AWS lists as enabled on every EKS 1.33 platform
# version, plus ValidatingAdmissionPolicy (GA since 1.30, on by default
# upstream). Upstream's other default-on plugins (ClusterTrustBundleAttest,
# PodTopologyLabels, MutatingAdmissionPolicy) stay on too, but do nothing in
# 1.33 without their off-by-default feature gates.
ADMISSION_PLUGINS = [
    "NodeRestriction",
    "ExtendedResourceToleration",
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "TaintNodesByCondition",
    "PodSecurity",
    "Priority",
    "DefaultTolerationSeconds",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
]

# kube-controller-manager controllers (1.33 names). No nodes, scheduler or
# kubelets run here, so workload controllers are left out; pass --controllers
# to change the list (kube-controller-manager syntax, e.g. "*" for defaults).
CONTROLLERS = [
    "garbage-collector-controller",
    "namespace-controller",
    "clusterrole-aggregation-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "validatingadmissionpolicy-status-controller",
    "root-ca-certificate-publisher-controller",  # kube-root-ca.crt ConfigMaps
    "resourcequota-controller",  # quota status, which ResourceQuota admission needs
    "service-cidr-controller",
]

# For an admission judge: objects stored for UPDATE and DELETE cases have owner references to owners that never
# existed, which the garbage collector would delete under the tests.
JUDGE_CONTROLLERS = [c for c in CONTROLLERS if c != "garbage-collector-controller"]

COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager")


class UpError(Exception):
    pass


def log(msg: str) -> None:
    print(f"controlplane: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------- PKI


def openssl(*args: str, cwd: Path) -> None:
    proc = subprocess.run(
        ["openssl", *args], cwd=cwd, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise UpError(f"openssl {' '.join(args)} failed:\n{proc.stderr}")


def ec_key(path: Path) -> None:
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-out", str(path), cwd=path.parent)
    path.chmod(0o600)


def make_pki(pki: Path) -> None:
    """CA, apiserver serving cert, client certs and the SA signing key.

    Kept if already there (a restarted control plane keeps its identity)."""
    if (pki / "done").exists():
        return
    pki.mkdir(parents=True, exist_ok=True)
    ec_key(pki / "ca.key")
    openssl("req", "-x509", "-new", "-key", "ca.key", "-out", "ca.crt",
            "-days", "3650", "-subj", "/CN=hyperpod-kit-test-ca",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
            cwd=pki)

    def leaf(name: str, subj: str, ext: str) -> None:
        ec_key(pki / f"{name}.key")
        (pki / f"{name}.ext").write_text(ext)
        openssl("req", "-new", "-key", f"{name}.key", "-subj", subj,
                "-out", f"{name}.csr", cwd=pki)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt",
                "-CAkey", "ca.key", "-CAcreateserial", "-days", "3650",
                "-extfile", f"{name}.ext", "-out", f"{name}.crt", cwd=pki)

    client_ext = ("basicConstraints=critical,CA:FALSE\n"
                  "keyUsage=critical,digitalSignature\n"
                  "extendedKeyUsage=clientAuth\n")
    sans = ",".join([
        "IP:127.0.0.1", f"IP:{KUBERNETES_SERVICE_IP}", "DNS:localhost",
        "DNS:kubernetes", "DNS:kubernetes.default", "DNS:kubernetes.default.svc",
        "DNS:kubernetes.default.svc.cluster.local",
    ])
    leaf("apiserver", "/CN=kube-apiserver",
         "basicConstraints=critical,CA:FALSE\n"
         "keyUsage=critical,digitalSignature\n"
         "extendedKeyUsage=serverAuth\n"
         f"subjectAltName={sans}\n")
    leaf("admin", "/O=system:masters/CN=kubernetes-admin", client_ext)
    leaf("controller-manager", "/CN=system:kube-controller-manager", client_ext)
    # Serving cert for kube-controller-manager's own port (so it does not
    # write a self-signed one into its working directory).
    leaf("controller-manager-serving", "/CN=kube-controller-manager",
         "basicConstraints=critical,CA:FALSE\n"
         "keyUsage=critical,digitalSignature\n"
         "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n")
    # Service-account token signing key (ES256) and its public half.
    ec_key(pki / "sa.key")
    openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)
    for p in pki.glob("*.csr"):
        p.unlink()
    (pki / "done").write_text("")


def write_kubeconfig(path: Path, server: str, pki: Path, client: str, user: str) -> None:
    def b64(name: str) -> str:
        return base64.b64encode((pki / name).read_bytes()).decode()

    # JSON is valid YAML, so kubectl and client libraries read it as is.
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "hyperpod-kit-test", "cluster": {
            "server": server, "certificate-authority-data": b64("ca.crt")}}],
        "users": [{"name": user, "user": {
            "client-certificate-data": b64(f"{client}.crt"),
            "client-key-data": b64(f"{client}.key")}}],
        "contexts": [{"name": "hyperpod-kit-test", "context": {
            "cluster": "hyperpod-kit-test", "user": user}}],
        "current-context": "hyperpod-kit-test",
        "preferences": {},
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cfg, indent=2) + "\n")
    tmp.chmod(0o600)
    tmp.replace(path)


# --------------------------------------------------------------- processes


def free_ports(n: int) -> list[int]:
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def proc_pgid_and_exe(pid: int) -> tuple[int, str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        exe = os.readlink(f"/proc/{pid}/exe")
    except (OSError, ValueError):
        return None  # gone, a zombie, or not ours to inspect
    exe = exe.removesuffix(" (deleted)")  # binary replaced while running
    # Field 5 is the pgid; the command name (field 2) may contain spaces.
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[2]), exe


def our_processes(state: dict) -> list[int]:
    """Live pids of the recorded process group that run one of our components (by the binary's name, so a
    bin dir of symlinks is recognised too)."""
    pgid = state["pgid"]
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        info = proc_pgid_and_exe(int(entry))
        if info and info[0] == pgid and os.path.basename(info[1]) in COMPONENTS:
            pids.append(int(entry))
    return pids


def stop(state: dict, grace: float = 15.0) -> list[int]:
    """SIGTERM the controller-manager and apiserver, then etcd, then SIGKILL
    whatever is left of the group. Returns the pids that were running."""
    running = set(our_processes(state))
    if not running:
        return []
    order = [state["pids"].get(c) for c in reversed(COMPONENTS)]
    for batch in (order[:2], order[2:]):
        batch = [p for p in batch if p in running]
        for pid in batch:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and set(batch) & set(our_processes(state)):
            time.sleep(0.1)
    for pid in our_processes(state):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and our_processes(state):
        time.sleep(0.1)
    return sorted(running)


def tail(path: Path, lines: int = 25) -> str:
    try:
        data = path.read_text(errors="replace").splitlines()
    except OSError as e:
        return f"    (no log: {e})"
    return "\n".join("    " + line for line in data[-lines:]) or "    (empty)"


# ------------------------------------------------------------------ checks


def http_ok(url: str, ctx: ssl.SSLContext | None = None) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=3, context=ctx) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except (urllib.error.URLError, OSError) as e:
        return 0, str(e)


def resolve_bin_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg).resolve()
    env = os.environ.get("HYPERPOD_K8S_BIN_DIR")
    if env:
        return Path(env).resolve()
    log("running build.sh to find (or build) the binaries")
    proc = subprocess.run(["bash", str(BUILD_SCRIPT)], stdout=subprocess.PIPE, text=True,
                          env={**os.environ, "GO": go_binary()})
    if proc.returncode != 0:
        raise UpError(f"build.sh failed with exit code {proc.returncode}")
    lines = proc.stdout.strip().splitlines()
    if not lines:
        raise UpError("build.sh printed no bin dir")
    return Path(lines[-1]).resolve()


# ---------------------------------------------------------------------- up


def up(args: argparse.Namespace) -> int:
    d = Path(args.dir).resolve()
    d.mkdir(parents=True, exist_ok=True)
    state_file = d / "state.json"
    if state_file.exists():
        old = json.loads(state_file.read_text())
        if our_processes(old):
            raise UpError(f"a control plane from {d} is still running; run down first")

    bin_dir = resolve_bin_dir(args.bin_dir)
    for c in COMPONENTS:
        if not os.access(bin_dir / c, os.X_OK):
            raise UpError(f"{bin_dir / c} is missing or not executable")

    t0 = time.monotonic()
    # A state dir may be reused (up, down, up --env other): its etcd data would keep the first environment's
    # objects under the second one's, so every start begins with an empty store. Certificates are kept.
    shutil.rmtree(d / "etcd-data", ignore_errors=True)
    pki = d / "pki"
    make_pki(pki)
    etcd_client, etcd_peer, api_port, kcm_port = free_ports(4)
    server = f"https://127.0.0.1:{api_port}"
    admin_kc = d / "admin.kubeconfig"
    kcm_kc = d / "controller-manager.kubeconfig"
    write_kubeconfig(admin_kc, server, pki, "admin", "kubernetes-admin")
    write_kubeconfig(kcm_kc, server, pki, "controller-manager", "system:kube-controller-manager")

    cmds = {
        "etcd": [
            str(bin_dir / "etcd"),
            f"--data-dir={d / 'etcd-data'}",
            f"--client-url=http://127.0.0.1:{etcd_client}",
            f"--peer-url=http://127.0.0.1:{etcd_peer}",
        ],
        "kube-apiserver": [
            str(bin_dir / "kube-apiserver"),
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={api_port}",
            f"--etcd-servers=http://127.0.0.1:{etcd_client}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            f"--service-account-issuer={SA_ISSUER}",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--authorization-mode=Node,RBAC",
            f"--enable-admission-plugins={','.join(ADMISSION_PLUGINS)}",
            "--allow-privileged=true",
            "--profiling=false",
        ],
        "kube-controller-manager": [
            str(bin_dir / "kube-controller-manager"),
            "--bind-address=127.0.0.1",
            f"--secure-port={kcm_port}",
            f"--tls-cert-file={pki / 'controller-manager-serving.crt'}",
            f"--tls-private-key-file={pki / 'controller-manager-serving.key'}",
            f"--kubeconfig={kcm_kc}",
            f"--authentication-kubeconfig={kcm_kc}",
            f"--authorization-kubeconfig={kcm_kc}",
            f"--client-ca-file={pki / 'ca.crt'}",
            f"--root-ca-file={pki / 'ca.crt'}",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            "--use-service-account-credentials=true",
            "--leader-elect=false",
            f"--controllers={args.controllers}",
            "--profiling=false",
        ],
    }

    state = {
        "dir": str(d),
        "bin_dir": str(bin_dir),
        "pgid": None,
        "pids": {},
        "ports": {"etcd_client": etcd_client, "etcd_peer": etcd_peer,
                  "kube_apiserver": api_port, "kube_controller_manager": kcm_port},
        "server": server,
        "kubeconfig": str(admin_kc),
        "started_at": time.time(),
        "ready": False,
    }

    def save() -> None:
        tmp = state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2) + "\n")
        tmp.replace(state_file)

    procs: dict[str, subprocess.Popen] = {}

    def spawn(name: str) -> None:
        # All three go into one new process group (inside this session), led
        # by etcd, so `down` can find and stop every one of them.
        with open(d / f"{name}.log", "ab") as logf:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
            logf.write(f"\n==== {stamp} {' '.join(cmds[name])}\n".encode())
            logf.flush()
            procs[name] = subprocess.Popen(
                cmds[name], cwd=d, stdin=subprocess.DEVNULL, stdout=logf,
                stderr=subprocess.STDOUT, process_group=state["pgid"] or 0,
            )
        if state["pgid"] is None:
            state["pgid"] = procs[name].pid
        state["pids"][name] = procs[name].pid
        save()

    try:
        # kube-apiserver retries etcd until it answers, so both start at once.
        # kube-controller-manager exits if it cannot read its delegated-authn
        # ConfigMap, which RBAC allows only once the apiserver has bootstrapped
        # its roles: it starts when /readyz is ok.
        spawn("etcd")
        spawn("kube-apiserver")
        ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        deadline = t0 + args.timeout
        stage = "readyz"
        last = ""
        while True:
            for name, p in procs.items():
                if p.poll() is not None:
                    raise UpError(f"{name} exited with code {p.returncode} while waiting for {stage}")
            if stage == "readyz":
                code, body = http_ok(f"{server}/readyz", ctx)
                if code == 200:
                    log(f"kube-apiserver ready after {time.monotonic() - t0:.1f}s")
                    spawn("kube-controller-manager")
                    stage = "default namespace"
                last = f"/readyz -> {code} {body[-300:]}"
            if stage == "default namespace":
                code, body = http_ok(f"{server}/api/v1/namespaces/default", ctx)
                if code == 200:
                    stage = "default service account"
                last = f"namespace default -> {code}"
            if stage == "default service account":
                code, body = http_ok(
                    f"{server}/api/v1/namespaces/default/serviceaccounts/default", ctx)
                if code == 200:
                    break
                last = f"serviceaccount default/default -> {code}"
            if time.monotonic() > deadline:
                raise UpError(f"not ready after {args.timeout:.0f}s, waiting for {stage} (last: {last})")
            time.sleep(0.2)
    except BaseException as e:
        if state["pgid"] is not None:
            stop(state, grace=5)
        save()
        msg = str(e) if isinstance(e, UpError) else f"{type(e).__name__}: {e}"
        log(f"ERROR: {msg}")
        for name in COMPONENTS:
            print(f"---- tail of {d / (name + '.log')}", file=sys.stderr)
            print(tail(d / f"{name}.log"), file=sys.stderr)
        if isinstance(e, (UpError, KeyboardInterrupt)):
            return 1
        raise

    state["ready"] = True
    state["startup_seconds"] = round(time.monotonic() - t0, 2)
    save()
    log(f"control plane ready in {state['startup_seconds']}s; {server}; logs in {d}")
    print(f"KUBECONFIG={admin_kc}", flush=True)
    return 0


def down(args: argparse.Namespace) -> int:
    d = Path(args.dir).resolve()
    state_file = d / "state.json"
    if not state_file.exists():
        log(f"no {state_file}: nothing to stop")
        return 0
    state = json.loads(state_file.read_text())
    if state.get("pgid") is None:
        log("nothing was started")
        return 0
    t0 = time.monotonic()
    pids = stop(state, grace=args.grace)
    left = our_processes(state)
    if left:
        log(f"ERROR: still running: {left}")
        return 1
    if not pids:
        log("nothing was running")
        return 0
    log(f"stopped {len(pids)} process(es) {pids} in {time.monotonic() - t0:.1f}s")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("up", help="start the control plane")
    u.add_argument("--dir", required=True, help="state, certs, data and logs")
    u.add_argument("--bin-dir", help="dir with etcd, kube-apiserver, kube-controller-manager")
    u.add_argument("--timeout", type=float, default=180.0, help="seconds (default 180)")
    u.add_argument("--controllers", default=",".join(CONTROLLERS),
                   help="kube-controller-manager --controllers value")
    dn = sub.add_parser("down", help="stop the control plane started in --dir")
    dn.add_argument("--dir", required=True)
    dn.add_argument("--grace", type=float, default=15.0,
                    help="seconds to wait after SIGTERM before SIGKILL (default 15)")
    args = ap.parse_args(argv)
    try:
        return up(args) if args.cmd == "up" else down(args)
    except UpError as e:
        log(f"ERROR: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
