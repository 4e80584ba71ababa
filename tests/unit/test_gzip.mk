# gzip_reader.c reads back how blocks were coded; zlib is the reference: every output is inflated by it, and its crc32 checks crc32_update.
test_gzip_SRCS := tests/unit/gzip_reader.c
test_gzip_LIBS := -lz
