# fabricgen: `make render` renders the example fabric, `make test` runs the whole suite.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
INTENT ?= inventory/fabric.yaml
OUT    ?= build

.PHONY: venv constraints render plan inventory sonic-yang test test-fast lint typecheck bench bench-lab bench-sot golden sonic-platform sot-servers sot-servers-down docs-cli clean

# Every extra, at the versions of constraints.txt (`make constraints` refreshes it from a fresh venv).
$(BIN)/fabricgen: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[dev,deploy,sonic,sot]'
	@touch $@

venv: $(BIN)/fabricgen

# Re-resolve the newest versions the ranges in pyproject.toml allow, then run `make test` before committing.
constraints:
	rm -rf .venv-constraints && $(PYTHON) -m venv .venv-constraints
	.venv-constraints/bin/pip install -q --upgrade pip
	.venv-constraints/bin/pip install -q '.[dev,deploy,sonic,sot]'
	{ echo '# Exact versions CI and `make venv` install (pip -c); `make constraints` re-resolves them within pyproject.toml.'; \
	  .venv-constraints/bin/pip freeze --all --exclude fabricgen --exclude pip | LC_ALL=C sort; } > constraints.txt
	rm -rf .venv-constraints

render: venv
	$(BIN)/fabricgen render -i $(INTENT) -o $(OUT)

plan: venv
	$(BIN)/fabricgen plan -i $(INTENT)

inventory: venv
	$(BIN)/fabricgen inventory -i $(INTENT) -o inventory

# SONiC's YANG models at the pinned sonic-buildimage commit (sparse, depth 1: only src/sonic-yang-models),
# into ~/.cache/fabricgen/ where `fabricgen check` finds them; SONIC_YANG_DIR=path puts them elsewhere
# (then pass --sonic-yang path or set FABRICGEN_SONIC_YANG).  Needs git and access to github.com.
# RELEASE=202411 fetches that SONiC release branch's models instead (check uses them for an intent whose
# platforms.sonic_release names it).
RELEASE ?=
sonic-yang: venv
	$(BIN)/python -m fabricgen.check.yang_models fetch $(if $(SONIC_YANG_DIR),--dest $(SONIC_YANG_DIR)) $(if $(RELEASE),--release $(RELEASE))

# The whole suite: lint, types, then every test (live-lab tests need root; they skip elsewhere).
# -n auto: the live labs (one xdist group, one lab at a time) run beside the other tests on the remaining cores
test: venv lint typecheck
	$(BIN)/pytest -q -rs -n auto --dist loadgroup

# The inner loop: no live lab, no wheel or venv builds, no 8K+ GPU designs (the whole suite is `make test`).
test-fast: venv
	$(BIN)/pytest -q -n auto -m "not lab and not slow"

lint: venv
	$(BIN)/ruff check .

typecheck: venv
	$(BIN)/mypy  # strict, over the files pyproject.toml lists

bench: venv
	$(BIN)/python bench/bench_render.py --write-docs
	$(BIN)/python bench/bench_render.py --sizes 16384 --tenants 64 --no-check --no-pyavd --write-docs
	$(BIN)/python bench/bench_analyze.py --write-docs
	$(BIN)/python bench/bench_analyze.py --sizes 16384 --tenants 64 --write-docs

bench-lab: venv
	$(BIN)/python bench/bench_lab.py

# `fabricgen sot` on a 4K-GPU fabric against the servers of `make sot-servers`: first and second push, both servers.
bench-sot: venv
	$(BIN)/python bench/bench_sot.py

# Real NetBox (../shared/netbox, Python 3.12 venv) and Nautobot (PyPI, Python 3.11 venv) on PostgreSQL and Redis,
# listening on 127.0.0.1 only, for the `fabricgen sot` tests (tests/sot/servers.py; state in .fabricgen/sot-servers).
# Waits until both are ready; BACKGROUND=1 returns at once (CI overlaps their migrations with the other tests).
sot-servers:
	$(PYTHON) tests/sot/servers.py up $(if $(BACKGROUND),--background)

sot-servers-down:
	$(PYTHON) tests/sot/servers.py down

# Regenerate the SONiC facts fabricgen ships (fabricgen/catalog/sonic_facts/: one record per SKU, GCU's rules)
# from SONiC's own files: SONIC_PLATFORM=DIR names a sonic-buildimage tree; without it the pinned files are
# fetched into ~/.cache/fabricgen (needs github.com).  Review `git diff`, then commit.
SONIC_PLATFORM ?=
sonic-platform: venv
	$(BIN)/python tools/sonic_facts.py $(SONIC_PLATFORM)

# Regenerate the README's commands table and docs/commands.md from the CLI (a test fails when they are stale).
docs-cli: venv
	$(BIN)/python tools/cli_docs.py

# Regenerate the reviewed golden files of the example fabric (review the diff before committing).
golden: venv
	$(BIN)/python -m tests.golden --update

clean:
	rm -rf $(OUT) .pytest_cache .mypy_cache .ruff_cache
