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

.PHONY: setup synth test bench schema clean

setup: $(VENV)/.installed node_modules/.installed

$(VENV)/.installed: pyproject.toml requirements.lock
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@[[ "$$($(NODE_BIN)/node --version)" == v22.* ]] || { echo "node_modules/.bin/node is not Node 22"; exit 1; }
	touch $@

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

## schema: regenerate config/schema.json and the README's generated tables from the code
schema: setup
	$(VENV)/bin/hyperpod-kit schema --output config/schema.json
	$(PY) scripts/readme_tables.py

clean:
	rm -rf $(VENV) node_modules cdk.out .pytest_cache
