# The CPython layout table against the headers of the releases pyenv installed here (skipped,
# saying so, when there are none): part of make unit.
.PHONY: python-layout
python-layout:
	$(Q)tests/interp/test_python_layout.sh

unit: python-layout
