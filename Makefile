# One-command set-up: `make run` and `make test` create .venv when missing, install the project, then do their job.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# Find Python >= 3.12: python3.13/python3.12 on PATH that actually run, else pyenv's installed versions.
define find_python
for c in python3.13 python3.12; do \
  if command -v $$c >/dev/null 2>&1 && $$c -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then command -v $$c; exit 0; fi; \
done; \
if command -v pyenv >/dev/null 2>&1; then \
  root=$$(pyenv root); \
  for v in $$(ls -1 "$$root/versions" 2>/dev/null | grep -E '^3\.1[2-9]' | sort -rV); do \
    if [ -x "$$root/versions/$$v/bin/python" ]; then echo "$$root/versions/$$v/bin/python"; exit 0; fi; \
  done; \
fi; \
exit 1
endef

.PHONY: run test test-fast venv lint clean

$(PY):
	@py=$$( $(find_python) ) || { echo "error: no Python >= 3.12 found. Looked for python3.13 and python3.12 on PATH and for 3.12+/3.13+ under 'pyenv root'/versions. Install one (e.g. 'pyenv install 3.12') and retry." >&2; exit 1; }; \
	echo "creating $(VENV) with $$py"; \
	"$$py" -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/airace catalog
	$(VENV)/bin/airace run scenarios/baseline.toml --out results/baseline
	$(VENV)/bin/airace report results/baseline --out results/baseline/figures

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-logo
	$(VENV)/bin/pytest -q

test-fast: $(STAMP)  # the quick loop: everything but the slow and browser tests (CI runs them all)
	$(VENV)/bin/pytest -q -m "not slow and not browser"

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-logo

# README numbers and figures: seeded sweeps of the baseline and of each scenario (the same seeds), then
# analysis.readme rewrites the README's tables between its <!-- generated:... --> markers and docs/figure_*.png.
README_SEEDS ?= 20
SCENARIO_SEEDS ?= 10
SENSITIVITY_RUNS ?= 200  # the hindcast's bands and the sensitivity figure
README_RESULTS := results/readme
README_SCENARIOS := rubin_delay hbm_shortage power_constrained neocloud_surge openai_stargate tpu_surge amd_breakthrough

.PHONY: readme
readme: $(STAMP)
	rm -rf $(README_RESULTS)
	$(VENV)/bin/airace sweep scenarios/baseline.toml --runs $(README_SEEDS) --out $(README_RESULTS)/baseline --quiet
	$(VENV)/bin/airace sweep scenarios/baseline.toml --runs $(SCENARIO_SEEDS) --set allocation.partner_weight=0 --out $(README_RESULTS)/baseline_no_partner_weight --quiet
	for s in $(README_SCENARIOS); do \
	  $(VENV)/bin/airace sweep scenarios/$$s.toml --runs $(SCENARIO_SEEDS) --out $(README_RESULTS)/$$s --quiet || exit 1; \
	done
	$(VENV)/bin/airace sweep scenarios/uncertainty.toml --runs $(SENSITIVITY_RUNS) --out $(README_RESULTS)/uncertainty --quiet
	$(PY) -m analysis.readme $(README_RESULTS) --readme README.md --figures docs

# The hindcast alone: the baseline's seeds and the uncertainty sweep against the public record (analysis/hindcast.py).
HINDCAST_RESULTS := results/hindcast
.PHONY: hindcast
hindcast: $(STAMP)
	rm -rf $(HINDCAST_RESULTS)
	$(VENV)/bin/airace sweep scenarios/baseline.toml --runs $(SCENARIO_SEEDS) --out $(HINDCAST_RESULTS)/baseline --quiet
	$(VENV)/bin/airace sweep scenarios/uncertainty.toml --runs $(SENSITIVITY_RUNS) --out $(HINDCAST_RESULTS)/uncertainty --quiet
	$(PY) -m analysis.hindcast $(HINDCAST_RESULTS)/baseline --markdown
	$(PY) -m analysis.hindcast $(HINDCAST_RESULTS)/uncertainty --markdown

.PHONY: viz viz-screenshot
viz: $(STAMP)
	$(VENV)/bin/airace viz scenarios/baseline.toml

viz-screenshot: $(STAMP)
	$(PY) -m model.viz.browser docs/viz.png

clean:
	rm -rf $(VENV) results
