test_pprof_encode_SRCS := tests/unit/pprof_reader.c kernel/profiler/pprof_encode.c kernel/profiler/pprof_builder.c \
                          kernel/profiler/pb_writer.c kernel/profiler/pprof_fold.c \
                          kernel/profiler/report.c kernel/profiler/fold.c kernel/profiler/run.c \
                          kernel/profiler/raw.c kernel/profiler/fields.c kernel/labels.c kernel/symbols.c \
                          tests/unit/profiler_fold_fixture.c tests/unit/counting_heap.c
test_pprof_encode_LIBS := -lz
