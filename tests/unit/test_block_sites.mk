# The block table alone: its tables are the test's own, its threads pthreads.
test_block_sites_SRCS := kernel/profiler/block_sites.c
