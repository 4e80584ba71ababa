# zlib inflates every output and says whether it is the input.
fuzz_gzip_SRCS :=
fuzz_gzip_LIBS := -lz
