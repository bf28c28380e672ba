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
# shellcheck from Debian's packages, unpacked under .tools/ (no root, no system install).
SHELLCHECK_DEB := shellcheck=0.9.0-1
SHELLCHECK := $(CURDIR)/.tools/shellcheck/usr/bin/shellcheck

.PHONY: setup synth test bench schema mutation clean

setup: $(VENV)/.installed node_modules/.installed $(SHELLCHECK)

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
synth: setup
	$(VENV)/bin/hyperpod-kit validate config/$(ENV).yaml
	$(NODE_BIN)/cdk synth -c env=$(ENV) --quiet

## test: set up and run every test
test: setup
	$(PY) -m pytest

## bench: wall time of validate on dev, prod and a generated 500-team config
bench: setup
	$(PY) scripts/bench.py

## mutation: mutation testing (mutmut, [tool.mutmut] in pyproject.toml) of the config, validator, job and
## topology modules against the fast tests; prints the surviving mutants (long: run it on a quiet machine)
mutation: setup
	rm -rf mutants
	$(VENV)/bin/mutmut run --max-children 2
	$(VENV)/bin/mutmut results

## schema: regenerate config/schema.json and the README's generated tables from the code
schema: setup
	$(VENV)/bin/hyperpod-kit schema --output config/schema.json
	$(PY) scripts/readme_tables.py

clean:
	rm -rf $(VENV) node_modules .tools cdk.out .pytest_cache mutants
