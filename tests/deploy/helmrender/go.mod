module hostprof/tests/deploy/helmrender

go 1.19
