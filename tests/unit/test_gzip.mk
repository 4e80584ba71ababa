# zlib is the reference: every output is inflated by it, and its crc32 checks crc32_update.
test_gzip_SRCS := kernel/lib/gzip.c
test_gzip_LIBS := -lz
