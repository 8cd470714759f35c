# bench-python: what CPython frames cost (bench/bench_python.sh; root): the CPU sampler's BPF run
# time per Python sample at Python depth 20 and 100 beside a native program at the same depth,
# and the symbolizer's code-object cache with several Python services running. Numbers only.
# Report: $(OUTPUT)/bench/python.md
.PHONY: bench-python

bench-python: $(OUTPUT)/hostprof $(OUTPUT)/bench/deep_nofp | $(OUTPUT)/bench
	$(Q)bench/bench_python.sh $(OUTPUT)/hostprof $(OUTPUT)/bench/deep_nofp \
		> $(OUTPUT)/bench/python.md.tmp && mv $(OUTPUT)/bench/python.md.tmp $(OUTPUT)/bench/python.md
	$(Q)cat $(OUTPUT)/bench/python.md

# Part of `make bench` (after the report, which does not read it).
bench: bench-python
