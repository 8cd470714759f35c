module hostprof.test/golabels

go 1.19
