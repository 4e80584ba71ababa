# zlib inflates every output and says whether it is the input.
fuzz_gzip_SRCS :=
fuzz_gzip_LIBS := -lz
# Each input runs the whole inflate: 10,000 of the fixed runs (about 10 s) in `make fuzz-regress`.
fuzz_gzip_RUNS := 10000
