module hostprof.dev/gooffsets

go 1.19
