# Fuzz targets for what a CPython process holds (src/interp/): python_lines (line tables and str
# objects, decoded without I/O) and python_code (a whole process image read by the code object
# cache). Built and run like the targets of fuzz.mk (its rules and run.sh); seeds from
# tests/fuzz/python_seeds.py. Included from the top Makefile after fuzz.mk.

FUZZ_PYTHON_TARGETS := python_lines python_code
FUZZ_TARGETS += $(FUZZ_PYTHON_TARGETS)
FUZZ_PYTHON_CHOSEN := $(filter $(FUZZ_PYTHON_TARGETS),$(FUZZ_TARGETS))

fuzz-build: $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_PYTHON_CHOSEN)) $(FUZZ_DIR)/seeds/python.stamp

$(FUZZ_DIR)/seeds/python.stamp: tests/fuzz/python_seeds.py
	$(call msg,SEEDS,$(FUZZ_DIR)/seeds/ of $(FUZZ_PYTHON_TARGETS))
	$(Q)rm -rf $(addprefix $(FUZZ_DIR)/seeds/,$(FUZZ_PYTHON_TARGETS))
	$(Q)python3 tests/fuzz/python_seeds.py $(FUZZ_DIR)/seeds && touch $@
