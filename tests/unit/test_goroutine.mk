# The goroutine profile over the test's own dumps and image, through the pprof builder, read back by the reader.
test_goroutine_SRCS := kernel/profiler/goroutine.c kernel/profiler/pprof_builder.c kernel/profiler/pb_writer.c \
                       kernel/symbols.c tests/unit/pprof_reader.c tests/unit/counting_heap.c
