test_pprof_pb_SRCS := kernel/profiler/pb_writer.c tests/unit/counting_heap.c
