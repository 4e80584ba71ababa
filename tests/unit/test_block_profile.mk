# The block profile over a block table of the test's own and a small image, through the pprof builder, read back
# by the reader.
test_block_profile_SRCS := kernel/profiler/block_profile.c kernel/profiler/block_sites.c \
                           kernel/profiler/pprof_builder.c kernel/profiler/pb_writer.c \
                           kernel/symbols.c tests/unit/pprof_reader.c tests/unit/counting_heap.c
