"""The CLI tools (plan, chart-sha256, schema, topology, batch-job, job) under hostile input: a documented
exit code (2 unreadable input or usage) and a message naming what was typed - never a traceback, never a
file written where the user did not ask. Cases from an outside hostile-input review."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import ROOT, SUPPORT

from cdk_app.cli import plan as planning


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cdk_app", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("base\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-qm", "base")
    git(repo, "tag", "v1")
    return repo


# --------------------------------------------------------------------------- plan --against-ref (F5)


@pytest.mark.parametrize("ref", ["--output={victim}", "-o{victim}", "--remote=x", "-", ""])
def test_a_ref_git_would_read_as_an_option_is_refused_and_writes_nothing(repo, tmp_path, ref):
    victim = tmp_path / "victim.txt"
    victim.write_text("important")
    ref = ref.format(victim=victim)
    with pytest.raises(planning.PlanInputError, match="not a git ref"):
        planning.resolve_ref(repo, ref)
    assert victim.read_text() == "important"


def test_git_itself_truncates_the_file_when_given_such_a_ref(repo, tmp_path):
    """The source of truth for the class: git's own behaviour with the argv the kit used to build."""
    victim = tmp_path / "victim.txt"
    victim.write_text("important")
    git(repo, "archive", "--format=tar", f"--output={victim}")
    assert victim.read_text() != "important"


def test_a_ref_resolves_to_the_commit_git_names(repo):
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert planning.resolve_ref(repo, "v1") == head
    assert planning.resolve_ref(repo, "HEAD") == head
    with pytest.raises(planning.PlanInputError, match="'nope': no such commit"):
        planning.resolve_ref(repo, "nope")
    # A tree is not a commit: git archive would take it, a baseline needs a commit.
    with pytest.raises(planning.PlanInputError, match="no such commit"):
        planning.resolve_ref(repo, "HEAD^{tree}")


@pytest.mark.slow
def test_plan_against_an_option_shaped_ref_exits_2_and_leaves_the_file(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("important")
    result = run("plan", "config/dev.yaml", f"--against-ref=--output={victim}")
    assert result.returncode == 2, result.stderr
    assert f"--against-ref '--output={victim}': not a git ref" in result.stderr
    assert "Traceback" not in result.stderr
    assert victim.read_text() == "important"


# ---------------------------------------------------------------------------- plan --baseline (F1, F14)

BAD_TEMPLATES = {
    "a list": [],
    "Resources text": {"Resources": "abc"},
    "Resources a number": {"Resources": 7},
    "a resource null": {"Resources": {"X": None}},
    "Type a number": {"Resources": {"X": {"Type": 5, "Properties": []}}},
    "Properties null": {"Resources": {"Q": {"Type": "AWS::SageMaker::ComputeQuota", "Properties": None}}},
    "InstanceGroups a mapping": {"Resources": {"C": {"Type": "AWS::SageMaker::Cluster",
                                                     "Properties": {"InstanceGroups": {"a": 1}}}}},
    "InstanceGroups of null and numbers": {"Resources": {"C": {"Type": "AWS::SageMaker::Cluster",
                                                               "Properties": {"InstanceGroups": [None, 5, "x"]}}}},
    "DeletionPolicy a number": {"Resources": {"X": {"Type": "AWS::EC2::VPC", "DeletionPolicy": 5,
                                                    "Properties": {"CidrBlock": "10.0.0.0/16"}}}},
    "UpdateReplacePolicy a list": {"Resources": {"X": {"Type": "AWS::EC2::VPC", "UpdateReplacePolicy": ["Retain"],
                                                       "Properties": {"CidrBlock": "10.0.0.0/16"}}}},
    "GetAtt of null": {"Resources": {"X": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": {"Fn::GetAtt": None}}}}},
    "ComputeQuotaResources text": {"Resources": {"Q": {"Type": "AWS::SageMaker::ComputeQuota", "Properties": {
        "ComputeQuotaConfig": {"ComputeQuotaResources": "x"}}}}},
}


@pytest.mark.synth
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BAD_TEMPLATES))
def test_a_baseline_cfn_lint_refuses_is_refused_as_unreadable(tmp_path, name):
    """Source of truth: cfn-lint's own linter reports an error (E...) for each of these templates."""
    import json

    from cfnlint.api import ManualArgs, lint

    template = BAD_TEMPLATES[name]
    errors = [m.rule.id for m in lint(json.dumps(template), config=ManualArgs(regions=["us-east-1"]))
              if m.rule.id.startswith("E")]
    assert errors, f"cfn-lint accepts {name}"
    path = tmp_path / "HyperPod-dev-network.template.json"
    path.write_text(json.dumps(template))
    with pytest.raises(planning.PlanInputError, match=f"^{path}: not a CloudFormation template: "):
        planning.read_templates(tmp_path)


@pytest.mark.synth
@pytest.mark.parametrize("text, why", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"Resources": {}, "Resources": 7}', "key 'Resources' given twice in one object"),
])
def test_a_baseline_json_nested_past_the_parser_or_with_a_key_twice_is_unreadable(tmp_path, text, why):
    (tmp_path / "HyperPod-dev-network.template.json").write_text(text)
    with pytest.raises(planning.PlanInputError, match=why):
        planning.read_templates(tmp_path)


def test_plan_with_a_garbage_baseline_exits_2_naming_the_file_and_field(tmp_path):
    baseline = tmp_path / "baseline"
    baseline.mkdir()
    (baseline / "HyperPod-dev-cluster.template.json").write_text(
        '{"Resources": {"Cluster": {"Type": "AWS::SageMaker::Cluster", "Properties": null}}}')
    # A --current carrying this config's digest, so no synth runs.
    from cdk_app.validator.report import check_file

    digest = planning.config_digest(check_file(ROOT / "config" / "dev.yaml").loaded.config)
    current = tmp_path / "current"
    current.mkdir()
    (current / "HyperPod-dev-governance.template.json").write_text(
        json.dumps({"Metadata": {planning.DIGEST_KEY: digest}, "Resources": {}}, separators=(", ", ": ")))
    result = run("plan", "config/dev.yaml", "--baseline", str(baseline), "--current", str(current))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert (f"{baseline}/HyperPod-dev-cluster.template.json: not a CloudFormation template: "
            "Resources.Cluster.Properties is null, CloudFormation wants a mapping") in result.stderr


@pytest.mark.synth
def test_a_manifest_that_is_not_a_cloud_assembly_is_unreadable(tmp_path):
    (tmp_path / "manifest.json").write_text('{"artifacts": {"S": {"type": "aws:cloudformation:stack"}}}')
    with pytest.raises(planning.PlanInputError, match="artifacts.S.properties.templateFile"):
        planning.read_templates(tmp_path)
    (tmp_path / "manifest.json").write_text('{"artifacts": [1]}')
    with pytest.raises(planning.PlanInputError, match="not a cloud assembly manifest"):
        planning.termination_protection(tmp_path)


# --------------------------------------------------------------------------------- chart-sha256 (F2, F16)

CHART = SUPPORT / "data" / "hyperpod-chart"
NVIDIA = CHART / "nvidia-device-plugin-0.16.1.tgz"


def chart_archive(tmp_path: Path, chart_yaml: str) -> Path:
    """A .tar.gz of helm_chart/HyperPodHelmChart/ holding only `chart_yaml`."""
    import io
    import tarfile

    path = tmp_path / "chart.tgz"
    with tarfile.open(path, "w:gz") as tar:
        data = chart_yaml.encode()
        info = tarfile.TarInfo("repo-abc/helm_chart/HyperPodHelmChart/Chart.yaml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


DEPENDENCY = ("apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n  - name: nvidia-device-plugin\n"
              "    version: 0.16.1\n    repository: https://nvidia.github.io/k8s-device-plugin\n")


@pytest.mark.parametrize("chart_yaml, message", [
    ("- a\n- b\n", "Chart.yaml is a list, Helm wants a mapping"),
    ("5\n", "Chart.yaml is the number 5, Helm wants a mapping"),
    ("name: c\ndependencies: [5, null]\n", "Chart.yaml: dependencies[0] is the number 5, Helm wants a mapping"),
    ("name: c\ndependencies: {a: 1}\n", "Chart.yaml: dependencies is a mapping, Helm wants a list"),
    ("name: c\ndependencies:\n  - {name: [x], repository: https://x}\n", "dependencies[0].name is a list"),
    ("dependencies: " + "[" * 20_000 + "]" * 20_000 + "\n", "Chart.yaml: nested too deeply"),
])
@pytest.mark.slow
def test_a_chart_yaml_helm_would_not_read_exits_2_naming_it(tmp_path, chart_yaml, message):
    result = run("chart-sha256", "--archive", str(chart_archive(tmp_path, chart_yaml)))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert message in result.stderr


@pytest.fixture(scope="module")
def helm_index(tmp_path_factory) -> str:
    """The index.yaml real helm writes (`helm repo index`) for the published nvidia-device-plugin archive."""
    from support.handlers import layer_binary

    work = tmp_path_factory.mktemp("helm")
    helm = layer_binary("helm/helm", work / "bin")
    repo = work / "repo"
    repo.mkdir()
    (repo / NVIDIA.name).write_bytes(NVIDIA.read_bytes())
    subprocess.run([str(helm), "repo", "index", str(repo), "--url", "https://nvidia.github.io/k8s-device-plugin"],
                   check=True, capture_output=True, env={"HOME": str(work), "PATH": "/usr/bin:/bin"})
    return (repo / "index.yaml").read_text()


def test_the_index_helm_writes_gives_the_pin(tmp_path, helm_index):
    import hashlib

    import yaml

    index = tmp_path / "index.yaml"
    index.write_text(helm_index)
    result = run("chart-sha256", "--archive", str(chart_archive(tmp_path, DEPENDENCY)),
                 "--index", f"nvidia-device-plugin={index}")
    assert result.returncode == 0, result.stderr
    pin = yaml.safe_load(result.stdout)["hyperpod"]["helm_chart"]["dependencies"]["nvidia-device-plugin"]
    assert pin == {"url": f"https://nvidia.github.io/k8s-device-plugin/{NVIDIA.name}",
                   "sha256": hashlib.sha256(NVIDIA.read_bytes()).hexdigest()}


@pytest.mark.parametrize("edit, message", [
    (lambda i: [i], "index.yaml is a list, Helm wants a mapping"),
    (lambda i: {**i, "entries": [1]}, "entries is a list, Helm wants a mapping"),
    (lambda i: {**i, "entries": {"nvidia-device-plugin": [5]}}, "entries.nvidia-device-plugin[0] is the number 5"),
    (lambda i: {**i, "entries": {"nvidia-device-plugin": 5}}, "entries.nvidia-device-plugin is the number 5"),
    # urls a text: the first character used to become the URL.
    (lambda i: {**i, "entries": {"nvidia-device-plugin": [
        {**i["entries"]["nvidia-device-plugin"][0], "urls": i["entries"]["nvidia-device-plugin"][0]["urls"][0]}]}},
     "urls is the text 'https://"),
    (lambda i: {**i, "entries": {"nvidia-device-plugin": [
        {**i["entries"]["nvidia-device-plugin"][0], "digest": "abc"}]}}, "digest is the text 'abc'"),
])
@pytest.mark.slow
def test_an_index_unlike_the_one_helm_writes_exits_2_naming_the_field(tmp_path, helm_index, edit, message):
    import yaml

    index = tmp_path / "index.yaml"
    index.write_text(yaml.safe_dump(edit(yaml.safe_load(helm_index))))
    result = run("chart-sha256", "--archive", str(chart_archive(tmp_path, DEPENDENCY)),
                 "--index", f"nvidia-device-plugin={index}")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert message in result.stderr
    assert "sha256:" not in result.stdout


# ------------------------------------------------------------------------------ unwritable output (F3)


@pytest.mark.parametrize("target, reason", [
    ("/dev/full", "not a regular file (a directory, FIFO or device); give a file name"),
    ("{tmp}/missing/schema.json", "the folder {tmp}/missing does not exist")])
def test_schema_into_an_unwritable_place_exits_2_saying_why(tmp_path, target, reason):
    """Refused before writing, by the output-path rule every command shares (a FIFO would block)."""
    target = target.format(tmp=tmp_path)
    result = run("schema", "--output", target)
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"--output {target}: {reason.format(tmp=tmp_path)}\n"


@pytest.mark.parametrize("args", [("validate", "config/dev.yaml"), ("schema",), ("topology", "--format", "json", "-")])
def test_standard_output_on_a_full_disk_exits_2_not_internal_error(args):
    from support.node_lists import SEVEN, kubectl_list

    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "cdk_app", *args], cwd=ROOT, stdout=full,
                                stderr=subprocess.PIPE, text=True, timeout=60, input=kubectl_list(SEVEN))
    assert result.returncode == 2, result.stderr
    assert result.stderr == "hyperpod-kit: cannot write the output: No space left on device\n"


# ------------------------------------------------------------------------------ topology mermaid (F12, F13)


def _tree(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """(id -> label, child id -> parent id) of a mermaid flowchart as topology prints it."""
    import re

    labels, parents = {}, {}
    for line in text.splitlines()[1:]:
        if declared := re.fullmatch(r'  (\S+)\["(.*)"\]', line):
            assert declared.group(1) not in labels
            labels[declared.group(1)] = declared.group(2)
        elif edge := re.fullmatch(r"  (\S+) --> (\S+)", line):
            assert parents.setdefault(edge.group(2), edge.group(1)) == edge.group(1), f"{edge.group(2)}: two parents"
    return labels, parents


def test_mermaid_keeps_apart_names_that_differ_only_in_punctuation():
    """Kubernetes node names are DNS subdomains ('-' and '.'), label values also allow '_': every distinct
    name keeps its own node, and each node hangs under its own network nodes."""
    from support.node_lists import kubectl_list, node

    from cdk_app.kubernetes.topology import mermaid, parse_nodes

    names = ["a-b", "a.b", "a_b", "ab", "a-2d-b", "a_2d_b"]
    items = [node(name, [f"nn{sep}a", f"l2-{name}"]) for name, sep in zip(names, "-_.-_.")]
    labels, parents = _tree(mermaid(parse_nodes(kubectl_list(items), "n.json")))
    leaves = {label.split("<br/>")[0]: ident for ident, label in labels.items() if ident.startswith("node_")}
    assert sorted(leaves) == sorted(names)
    for item in items:
        name = item["metadata"]["name"]
        layer2 = parents[leaves[name]]
        layer1 = labels[parents[layer2]]
        assert (labels[layer2], layer1) == (f"layer 2: l2-{name}", "layer 1: " + item["metadata"]["labels"][
            "topology.k8s.aws/network-node-layer-1"])


def test_mermaid_label_text_cannot_end_the_label_or_the_line():
    from support.node_lists import kubectl_list, node

    from cdk_app.kubernetes.topology import mermaid, parse_nodes

    # Label values cannot carry such characters (the reader refuses them), node names are only escaped.
    text = mermaid(parse_nodes(kubectl_list([node('x"]\n  evil["y', ["n1"])]), "n.json"))
    labels, parents = _tree(text)  # every line is a declaration or an edge: nothing was injected
    assert len(labels) == 2 and len(parents) == 1 and len(text.splitlines()) == 4


@pytest.mark.slow
def test_mermaid_time_grows_linearly_with_the_node_count():
    """50,000 nodes (the attack's case) used to take over 60 s: the edge list was searched per node."""
    import time

    from cdk_app.kubernetes.topology import NodeInfo, mermaid

    def nodes(count: int) -> list[NodeInfo]:
        return [NodeInfo(name=f"n{i}", instance_type="ml.p5.48xlarge", health="Schedulable",
                         layers=("l1", f"l2-{i % 100}", f"l3-{i % 1000}"), ultraserver=None, devices={})
                for i in range(count)]

    small, large = nodes(5_000), nodes(50_000)
    start = time.perf_counter()
    mermaid(small)
    small_time = time.perf_counter() - start
    start = time.perf_counter()
    mermaid(large)
    large_time = time.perf_counter() - start
    assert large_time < 30 * max(small_time, 0.01), (small_time, large_time)


# ---------------------------------------------------------------------------------------- batch-job (F9)


def _batch_request(**overrides):
    from cdk_app.cli.batch_job import BatchJobRequest

    fields = {"team": "ProdExp1", "name": "j", "image": "111122223333.dkr.ecr.us-east-1.amazonaws.com/train:1",
              "instance_type": "ml.p4d.24xlarge", "output_s3": "s3://models/llama"}
    return BatchJobRequest(**{**fields, **overrides})


def _botocore_doc(service: str, shape: str, member: str) -> str:
    import botocore.session

    return botocore.session.get_session().get_service_model(service).shape_for(shape).members[member].documentation


def test_the_limits_are_the_ones_botocore_documents():
    from cdk_app.cli.batch_job import max_runtime_seconds, min_timeout_seconds

    assert "The maximum value is 28 days." in _botocore_doc("sagemaker", "StoppingCondition", "MaxRuntimeInSeconds")
    assert max_runtime_seconds() == 28 * 86400
    assert "The minimum value for the timeout is 60 seconds." in _botocore_doc("batch", "JobTimeout",
                                                                               "attemptDurationSeconds")
    assert min_timeout_seconds() == 60


@pytest.mark.parametrize("overrides, message", [
    ({"instance_count": 0}, "--instance-count 0: a training job runs on at least 1 instance"),
    ({"timeout_seconds": 0}, "--timeout 0: Batch's minimum timeout is 60 seconds"),
    ({"timeout_seconds": 59}, "--timeout 59: Batch's minimum timeout is 60 seconds"),
    ({"max_runtime_seconds": 28 * 86400 + 1}, "--max-runtime 2419201: SageMaker allows at most 2419200 seconds"),
    ({"image": ""}, "--image '': not a container image SageMaker can pull"),
    ({"image": "a b"}, "--image 'a b': not a container image SageMaker can pull"),
])
def test_a_request_aws_documents_as_refused_is_refused(overrides, message):
    from cdk_app.cli.batch_job import BatchJobError, render
    from cdk_app.config.loader import load_config

    config = load_config(ROOT / "config" / "batch-example.yaml").config
    with pytest.raises(BatchJobError, match=re.escape(message)):
        render(config, _batch_request(**overrides))
    # At the limit it is accepted (and botocore's own validator takes it).
    edge = {"instance_count": 1, "timeout_seconds": 60, "max_runtime_seconds": 28 * 86400}
    render(config, _batch_request(**{k: edge[k] for k in overrides if k in edge}))


BUCKETS = ["models", "my.bucket.name", "a-b", "abc", "UPPER", "under_score", "ab", "a" * 64, "a" * 63,
           "-lead", "trail-", "192.168.5.4", "a..b", "a.-b", "xn--abc", "sthree-x", "x-s3alias", "x--ol-s3",
           "amzn-s3-demo-x", "x.mrap", "x--x-s3", "x--table-s3", "1.2.3", "héllo"]


@pytest.mark.parametrize("bucket", BUCKETS)
def test_bucket_names_agree_with_botocore_where_botocore_decides(bucket):
    """botocore's endpoint rules library (aws.isVirtualHostableS3Bucket: length, lower case, host labels, not an
    IP address) is AWS's reference implementation; the reserved prefixes and suffixes are S3's naming rules,
    which it does not know, so a name it accepts may still be refused for those alone."""
    from botocore.endpoint_provider import RuleSetStandardLibrary

    from cdk_app.domain.s3_names import BUCKET_RESERVED_PREFIXES, BUCKET_RESERVED_SUFFIXES, bucket_name_problem

    botocore_ok = RuleSetStandardLibrary({}).aws_is_virtual_hostable_s3_bucket(bucket, True)
    reserved = bucket.startswith(BUCKET_RESERVED_PREFIXES) or bucket.endswith(BUCKET_RESERVED_SUFFIXES)
    assert (bucket_name_problem(bucket) is None) == (botocore_ok and not reserved), bucket_name_problem(bucket)


def test_batch_job_with_a_bucket_s3_refuses_exits_2_naming_it():
    """A bucket name S3 refuses is a malformed option value: a usage error, whatever the config."""
    result = run("batch-job", "--config", "config/batch-example.yaml", "--team", "ProdExp1", "--image", "img",
                 "--instance-type", "ml.p4d.24xlarge", "--output-s3", "s3://UPPER_bucket/x", "--name", "j")
    assert result.returncode == 2, result.stderr
    assert "--output-s3 's3://UPPER_bucket/x': not an S3 bucket S3 allows" in result.stderr


# ---------------------------------------------------------------------------------- job (F10, F17, F18)

JOB = ("job", "--config", "config/dev.yaml", "--team", "john", "--name", "t", "--image", "img")


def test_the_efa_instance_types_are_the_pinned_efa_device_plugin_charts():
    """Source of truth: supportedInstanceLabels of aws-efa-k8s-device-plugin 0.5.20 (the chart the kit pins)."""
    import tarfile

    import yaml

    from cdk_app.domain.efa_support import EFA_INSTANCE_TYPES

    with tarfile.open(CHART / "aws-efa-k8s-device-plugin-v0.5.20.tgz") as tar:
        values = yaml.safe_load(tar.extractfile("aws-efa-k8s-device-plugin/values.yaml"))
    assert EFA_INSTANCE_TYPES == frozenset(values["supportedInstanceLabels"]["values"])


@pytest.mark.parametrize("args, message", [
    (("--efa", "99"), "--efa 99 per node is more than one ml.g5.12xlarge has (1)"),
    (("--efa", "2"), "--efa 2 per node is more than one ml.g5.12xlarge has (1)"),
    (("--instance-type", "ml.m5.2xlarge", "--accelerators", "0", "--efa", "1"),
     "--efa 1: ml.m5.2xlarge has no EFA interface"),
    (("--kind", "job", "--max-retries", str(2**31)), f"--max-retries {2**31}: at most 2147483647"),
])
@pytest.mark.slow
def test_job_refuses_what_the_nodes_or_the_api_server_would(args, message):
    result = run(*JOB, *args, "--", "python", "t.py")
    # Past the int32 the API server stores: out of the option's range, a usage error; the rest on its merits.
    assert result.returncode == (2 if "--max-retries" in args else 1), result.stderr
    assert message in result.stderr


def test_the_largest_max_retries_is_the_int32_the_schemas_give_backoff_limit():
    """Source of truth: Job.spec.backoffLimit in kubernetes-validate's schema and runPolicy.backoffLimit in the
    PyTorchJob CRD are int32; 2**31 - 1 is written, 2**31 refused (above)."""
    import json

    import kubernetes_validate
    import yaml

    schema = json.loads((Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" /
                         "v1.33.0-local-strict" / "jobspec-batch-v1.json").read_text())
    assert schema["properties"]["backoffLimit"]["format"] == "int32"
    crd = (SUPPORT / "data" / "kubeflow.org_pytorchjobs.yaml").read_text()
    assert "backoffLimit:\n                    description: Optional number of retries before marking this job\n" \
           "                      failed.\n                    format: int32" in crd
    result = run(*JOB, "--kind", "job", "--max-retries", str(2**31 - 1), "--", "python", "t.py")
    assert result.returncode == 0, result.stderr
    job = next(d for d in yaml.safe_load_all(result.stdout) if d["kind"] == "Job")
    assert job["spec"]["backoffLimit"] == 2**31 - 1
    kubernetes_validate.validate(job, "1.33", strict=True)


def test_max_retries_on_a_pytorchjob_without_auto_resume_is_refused_not_dropped():
    """A PyTorchJob's retries are carried only by HyperPod's auto-resume annotation."""
    result = run(*JOB, "--max-retries", "7", "--", "python", "t.py")
    assert result.returncode == 2
    assert "--max-retries 7: a PyTorchJob retries through HyperPod auto-resume only" in result.stderr
    resumed = run(*JOB, "--max-retries", "7", "--auto-resume", "--", "python", "t.py")
    assert resumed.returncode == 0, resumed.stderr
    assert "'7'" in resumed.stdout or '"7"' in resumed.stdout


@pytest.mark.parametrize("text, message", [
    ('{"items": [{"metadata": null}]}', "item 0 has no metadata.name"),
    ('{"items": [{"x": NaN}]}', "NaN is not JSON"),
    ('{"items": [], "items": [{}]}', "key 'items' given twice"),
])
def test_a_malformed_cluster_node_list_is_unreadable_input(tmp_path, text, message):
    nodes = tmp_path / "nodes.json"
    nodes.write_text(text)
    result = run(*JOB, "--cluster-nodes", str(nodes), "--", "python", "t.py")
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "it has unknown" not in result.stderr


def test_the_elastic_bounds_message_says_where_a_nodes_it_names_comes_from():
    result = run(*JOB, "--min-nodes", "2", "--max-nodes", "20", "--", "python", "t.py")
    assert result.returncode == 2  # bounds that contradict --nodes: a usage error
    assert "--nodes, 1 when not given, is the size the job starts at" in result.stderr


# ------------------------------------------------------------------------------- control characters (F19)


def test_control_characters_in_names_and_paths_are_escaped_in_human_output(tmp_path):
    """Python's Unicode database (str.isprintable) decides what reaches the terminal raw."""
    dev = (ROOT / "config" / "dev.yaml").read_text()
    assert "  - name: john\n" in dev
    config = tmp_path / "a\nb.yaml"
    config.write_text(dev.replace("  - name: john\n", '  - name: "jo\\u0000hn"\n', 1))
    result = run("validate", str(config))
    assert result.returncode == 1
    assert all(c.isprintable() for line in result.stdout.splitlines() for c in line)
    assert "jo\\x00hn" in result.stdout
    finding = next(line for line in result.stdout.splitlines() if "HPK401" in line)
    assert finding.startswith(f"{tmp_path}/a\\nb.yaml:")


# ----------------------------------------------------------------------------------- image references (F10)


def test_image_references_are_judged_as_distribution_reference_judges_them():
    """Source of truth: the test table of github.com/distribution/reference (the parser the container runtimes
    use), kept in tests/support/data/distribution-reference-cases.json."""
    import json

    from cdk_app.domain.image_reference import reference_problem

    table = json.loads((SUPPORT / "data" / "distribution-reference-cases.json").read_text())["cases"]
    assert len(table) > 40
    for case in table:
        # sha512 is valid; that table only leaves its algorithm unregistered. Other unsupported digests are not.
        valid = case["error"] is None or (case["error"] == "digest.ErrDigestUnsupported"
                                          and case["input"].split("@")[1].startswith("sha512:"))
        assert (reference_problem(case["input"]) is None) == valid, (case, reference_problem(case["input"]))


@pytest.mark.parametrize("image, message", [
    ("Registry/Repo:Tag", "the repository must be lower-case"),
    ("repo@sha256:xyz", "not [registry[:port]/]repository[:tag][@digest]"),
    ("repo@sha256:" + "a" * 63, "digest 'sha256:"),
])
def test_job_refuses_images_the_kubelet_cannot_pull(image, message):
    result = run("job", "--config", "config/dev.yaml", "--team", "john", "--name", "t", "--image", image,
                 "--", "python", "t.py")
    assert result.returncode == 2, result.stderr  # a malformed option value
    assert f"--image {image!r}: give a container image reference (not empty, no spaces) the kubelet can pull: " \
           f"{message}" in result.stderr


def test_topology_table_escapes_control_characters_in_node_and_network_names():
    from support.node_lists import kubectl_list, node

    from cdk_app.kubernetes.topology import parse_nodes, table

    # Label values cannot carry control characters (the reader refuses them); node names are escaped.
    text = table(parse_nodes(kubectl_list([node("a\x1b[2Jb", ["n1"]), node("c", ["n1"]), node("d\x00", [])]),
                             "n.json"))
    assert all(c.isprintable() for line in text.splitlines() for c in line)
    assert "network node n1: a\\x1b[2Jb, c" in text and "d\\x00" in text


@pytest.mark.slow
@pytest.mark.parametrize("what", ["archive", "index"])
def test_chart_sha256_refuses_a_fifo_or_device_instead_of_blocking(tmp_path, what):
    """A FIFO without a writer blocks open() (POSIX); /dev/zero never ends."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    args = (["--archive", str(fifo)] if what == "archive" else
            ["--archive", str(CHART / "HyperPodHelmChart-a00b22d.tar.gz"), "--index", f"nvidia-device-plugin={fifo}"])
    result = run("chart-sha256", *args, timeout=30)
    assert result.returncode == 2, result.stderr
    assert f"cannot read {fifo.as_uri()}: is a pipe (FIFO), not a regular file" in result.stderr
    result = run("chart-sha256", "--archive", "/dev/zero", timeout=30)
    assert result.returncode == 2 and "file:///dev/zero: is a device, not a regular file" in result.stderr


# --------------------------------------------------------------- topology domains and node lists (round 3, class 2)
# Source of truth: Kueue v0.19.2 names a topology domain by every level up to it - pkg/util/tas DomainID joins the
# level values, and pkg/cache/scheduler/tas_topology_tree.go makes each domain's parent from the values above it -
# so one layer-3 value under two layer-2 nodes is two domains, and a required-topology job must fit in one.

PROD_JOB = ("job", "--config", "config/prod.yaml", "--team", "research-nlp", "--priority", "training", "--name", "t",
            "--image", "img", "--accelerators", "4")


def _nodes_under(*paths: tuple[str, ...], **labels: str) -> list[dict]:
    """Two p5 nodes under each path of network nodes."""
    from support.node_lists import node

    return [node(f"n-{i}-{j}", list(path), **labels) for i, path in enumerate(paths) for j in range(2)]


@pytest.mark.parametrize("paths, layer, largest", [
    ((("x", "b1", "c"), ("x", "b2", "c")), 3, "x/b1/c"),  # layer-3 "c" under two layer-2 nodes
    ((("x1", "b", "c1"), ("x2", "b", "c2")), 2, "x1/b"),  # layer-2 "b" under two layer-1 nodes
])
def test_required_topology_counts_a_value_under_two_parents_as_two_domains(paths, layer, largest):
    import dataclasses

    from support.node_lists import kubectl_list

    from cdk_app.kubernetes.job_templates import JobRequest, JobSpecError, render
    from cdk_app.kubernetes.topology import parse_nodes

    config = _prod_config("prod")
    nodes = parse_nodes(kubectl_list(_nodes_under(*paths)), "nodes.json")
    request = JobRequest(team="research-nlp", priority="training", name="t", image="img", command=("python",),
                         nodes=3, accelerators_per_node=4, topology="required", topology_layer=layer)
    with pytest.raises(JobSpecError, match=f"at most 2 of the nodes in nodes.json that fit share one layer-{layer} "
                                           f"network node \\({largest}\\), so --nodes 3 would wait forever"):
        render(config, request, nodes, "nodes.json")
    render(config, dataclasses.replace(request, topology="preferred"), nodes, "nodes.json")
    shared = next(i for i in range(layer, -1, -1) if paths[0][:i] == paths[1][:i])  # layers 1..shared are one domain
    if shared:
        render(config, dataclasses.replace(request, topology_layer=shared), nodes, "nodes.json")


def _prod_config(environment: str):
    from cdk_app.config.loader import load_config

    return load_config(ROOT / "config" / f"{environment}.yaml").config


def test_the_topology_views_keep_a_value_under_two_parents_apart():
    from support.node_lists import kubectl_list

    from cdk_app.kubernetes.topology import as_json, mermaid, parse_nodes, table

    nodes = parse_nodes(kubectl_list(_nodes_under(("x", "b1", "c"), ("x", "b2", "c"), ("x", "b2", "d"))), "n.json")
    labels, parents = _tree(mermaid(nodes))
    layer3 = sorted(ident for ident in labels if ident.startswith("L3_"))
    assert layer3 == ["L3_c", "L3_c_x2", "L3_d"]
    assert (parents["L3_c"], parents["L3_c_x2"], parents["L3_d"]) == ("L2_b1", "L2_b2", "L2_b2")
    assert {parents[f"node_n_2d_{i}_2d_{j}"] for i in (0, 1) for j in (0, 1)} == {"L3_c", "L3_c_x2"}
    lines = table(nodes).splitlines()
    assert "2 nodes share layer-3 network node c (under x/b1): n-0-0, n-0-1" in lines
    assert "2 nodes share layer-3 network node c (under x/b2): n-1-0, n-1-1" in lines
    assert "2 nodes share layer-3 network node d: n-2-0, n-2-1" in lines  # a value of one domain stays short
    assert [g["layers"] for g in as_json(nodes)["groups"] if g["layer"] == 3] == [
        ["x", "b1", "c"], ["x", "b2", "c"], ["x", "b2", "d"]]


@pytest.mark.parametrize("command", ["topology", "job"])
def test_a_node_listed_twice_is_unreadable_input_naming_it(tmp_path, command):
    """Kubernetes names each node once; a second entry (two lists pasted together) would count its GPUs twice."""
    from support.node_lists import kubectl_list, node

    items = _nodes_under(("x", "b", "c")) + [node("n-0-1", ["x", "b", "c"])]
    nodes = tmp_path / "nodes.json"
    nodes.write_text(kubectl_list(items))
    args = ("topology", str(nodes)) if command == "topology" else (
        *PROD_JOB, "--nodes", "3", "--cluster-nodes", str(nodes), "--", "python")
    result = run(*args)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (f"{nodes}: node 'n-0-1' is listed twice (items 1 and 2); a node list names each node "
                             "once - give the output of `kubectl get nodes -o json`, not lists joined\n")


def test_auto_resume_counts_only_nodes_labelled_schedulable():
    """--auto-resume pods select sagemaker.amazonaws.com/node-health-status=Schedulable (the pod template's
    nodeSelector): a node without the label, or with another value, is no place for them."""
    import dataclasses

    from support.node_lists import kubectl_list, node

    from cdk_app.kubernetes.job_templates import JobRequest, JobSpecError, render
    from cdk_app.kubernetes.topology import HEALTH_LABEL, parse_nodes

    unlabelled = node("fresh", ["x", "b", "c"])
    del unlabelled["metadata"]["labels"][HEALTH_LABEL]
    items = [node("ok", ["x", "b", "c"]), unlabelled, node("odd", ["x", "b", "c"], health="Degraded")]
    nodes = parse_nodes(kubectl_list(items), "nodes.json")
    request = JobRequest(team="research-nlp", priority="training", name="t", image="img", command=("python",),
                         nodes=2, accelerators_per_node=4, auto_resume=True)
    config = _prod_config("prod")
    with pytest.raises(JobSpecError) as err:
        render(config, request, nodes, "nodes.json")
    assert str(err.value) == (
        "--nodes 2: 1 of the 3 ml.p5.48xlarge nodes in nodes.json can give one pod 4 nvidia.com/gpu (fresh health unknown (--auto-resume pods select only nodes labelled "
        "sagemaker.amazonaws.com/node-health-status=Schedulable); odd health Degraded (--auto-resume pods select "
        "only nodes labelled sagemaker.amazonaws.com/node-health-status=Schedulable))")
    # Without auto-resume the pods select no health label: all three nodes can take them.
    render(config, dataclasses.replace(request, auto_resume=False, nodes=3), nodes, "nodes.json")


@pytest.mark.parametrize("args, code, message", [
    (("--topology-layer", "2"), 2, "--topology-layer 2 needs --topology required or --topology preferred"),
    (("--topology-layer", "9"), 2, "--topology-layer 9 needs --topology"),
    (("--topology-layer", "0", "--topology", "preferred"), 2, "--topology-layer must be 1 to 4, got 0"),
    (("--topology-layer", "2", "--topology", "preferred"), 0, "kueue.x-k8s.io/podset-preferred-topology: "
                                                              "topology.k8s.aws/network-node-layer-2"),
    (("--topology", "preferred"), 0, "topology.k8s.aws/network-node-layer-3"),
])
def test_topology_layer_means_something_or_is_refused(args, code, message):
    result = run(*PROD_JOB, *args, "--", "python")
    assert result.returncode == code, result.stderr
    assert message in (result.stdout if code == 0 else result.stderr)


@pytest.mark.parametrize("efa", ["all", "1"])
def test_efa_all_and_efa_n_are_refused_alike_on_nodes_without_efa(tmp_path, efa):
    from support.node_lists import CPU, kubectl_list

    nodes = tmp_path / "nodes.json"
    nodes.write_text(kubectl_list([CPU]))
    result = run(*PROD_JOB[:-2], "--instance-type", "ml.m7i.4xlarge", "--accelerators", "0", "--efa", efa,
                 "--cluster-nodes", str(nodes), "--", "python")
    assert result.returncode == 1, result.stderr
    assert (f"--efa {efa}: none of the 1 ml.m7i.4xlarge nodes in {nodes} advertises vpc.amazonaws.com/efa (they "
            "advertise no device); drop --efa (ml.m7i.4xlarge has no EFA interface") in result.stderr
    offline = run(*PROD_JOB[:-2], "--instance-type", "ml.m7i.4xlarge", "--accelerators", "0", "--efa", efa,
                  "--", "python")
    assert offline.returncode == 1
    assert f"--efa {efa}: ml.m7i.4xlarge has no EFA interface" in offline.stderr


# --- job follows the reach rule of cluster_policy.idle_resource_sharing (cdk_app/domain/reach.py) ---------------
DEV_TEXT = (ROOT / "config" / "dev.yaml").read_text()
JOHN_THREE_G5 = "      - instance_type: ml.g5.12xlarge\n        count: 3\n"


def _dev_job(tmp_path, sharing: str, john_g5: int, smith_limit: int, team: str, nodes: int):
    text = (DEV_TEXT.replace("idle_resource_sharing: Enabled", f"idle_resource_sharing: {sharing}")
            .replace(JOHN_THREE_G5, f"      - instance_type: ml.g5.12xlarge\n        count: {john_g5}\n")
            .replace("    borrow_limit: 100\n", f"    borrow_limit: {smith_limit}\n"))
    if team == "off":
        text = text.replace("  - name: smith\n", "  - name: smith\n    enabled: false\n")
        team = "smith"
    path = tmp_path / "dev.yaml"
    path.write_text(text)
    return run("job", "--config", str(path), "--team", team, "--name", "t", "--image", "i", "--nodes", str(nodes),
               "--", "true")


@pytest.mark.parametrize("sharing, john_g5, smith_limit, nodes, code, says", [
    # Disabled: smith borrows none of john's idle GPUs, however high its borrow limit.
    ("Disabled", 3, 100, 2, 1, "no team borrows while cluster_policy.idle_resource_sharing is Disabled"),
    ("Disabled", 1, 300, 2, 1, "its quota is 4 accelerators and no team borrows"),
    ("Disabled", 3, 100, 1, 0, ""),
    # Enabled: john's idle GPUs and the 2 unallocated instances are smith's to borrow, up to 300 % of its 1.
    ("Enabled", 1, 300, 4, 0, ""),
    ("Enabled", 1, 100, 3, 1, "its quota 4 accelerators + at most 4 accelerators borrowed (borrow_limit 100%)"),
    ("Enabled", 3, 100, 2, 0, ""),
])
def test_job_admits_what_the_idle_sharing_setting_lets_a_team_reach(tmp_path, sharing, john_g5, smith_limit, nodes,
                                                                    code, says):
    result = _dev_job(tmp_path, sharing, john_g5, smith_limit, "smith", nodes)
    assert result.returncode == code, result.stderr
    assert says in result.stderr and "Traceback" not in result.stderr


def test_job_tells_a_disabled_team_it_is_disabled_not_that_it_has_no_quota(tmp_path):
    result = _dev_job(tmp_path, "Enabled", 3, 100, "off", 1)
    assert result.returncode == 1
    assert "team 'smith' is disabled (enabled: false)" in result.stderr and "no quota" not in result.stderr


def test_hpk411_and_job_agree_that_a_team_without_quota_runs_nothing(tmp_path):
    text = DEV_TEXT.replace("  - name: smith\n", "  - name: solo\n    quota: []\n  - name: smith\n")
    path = tmp_path / "dev.yaml"
    path.write_text(text)
    validated = run("validate", str(path))
    [line] = [line for line in validated.stdout.splitlines() if "HPK411" in line]
    assert "borrowed" not in line and "requests accelerators, CPU or memory never runs" in line
    result = run("job", "--config", str(path), "--team", "solo", "--name", "t", "--image", "i",
                 "--instance-type", "ml.g5.12xlarge", "--", "true")
    assert result.returncode == 1 and "has no quota for ml.g5.12xlarge" in result.stderr
