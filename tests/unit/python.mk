# What CPython says of its own line tables, for tests/unit/test_python_lines.c: every interpreter
# whose layout hostprof knows (3.10 to 3.13) runs tests/unit/python_lines_fx.py into
# $(OUTPUT)/fixtures/python-lines/: system-3.N.txt from the distribution's /usr/bin/python3
# (required: the rule fails without it), pyenv-3.N.M.txt from each pyenv version found. Made here,
# as root, because the unit tests run as nobody, who cannot reach a pyenv under /root.
# Included from tests/unit/fixtures.mk: uses its $(UNIT_FX_DIR), $(Q) and $(msg).

UNIT_FX_PY_DIR := $(UNIT_FX_DIR)/python-lines
UNIT_FX_PY_SYSTEM ?= /usr/bin/python3
UNIT_FX_PYENV := $(or $(PYENV_ROOT),$(HOME)/.pyenv)
UNIT_FX_PYENV_PYTHONS := $(wildcard $(UNIT_FX_PYENV)/versions/3.1[0-3].*/bin/python3)

unit-fixtures: $(UNIT_FX_PY_DIR)/stamp

$(UNIT_FX_PY_DIR)/stamp: tests/unit/python_lines_fx.py tests/unit/python.mk
	$(call msg,FIXTURE,$(UNIT_FX_PY_DIR))
	$(Q)set -e; d=$(UNIT_FX_PY_DIR); rm -rf $$d; mkdir -p $$d; \
	ver='import sys; print("%d.%d" % sys.version_info[:2])'; \
	v=$$($(UNIT_FX_PY_SYSTEM) -c "$$ver"); \
	$(UNIT_FX_PY_SYSTEM) tests/unit/python_lines_fx.py > $$d/system-$$v.txt; \
	for py in $(UNIT_FX_PYENV_PYTHONS); do \
		v=$$($$py -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])'); \
		$$py tests/unit/python_lines_fx.py > $$d/pyenv-$$v.txt; \
	done; \
	touch $@
