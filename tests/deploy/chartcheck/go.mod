module hostprof/tests/deploy/chartcheck

go 1.19
