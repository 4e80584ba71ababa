test_pprof_encode_SRCS := kernel/profiler/pprof_encode.c kernel/profiler/pb_writer.c kernel/profiler/pprof_fold.c kernel/lib/gzip.c \
                          kernel/lib/parse.c kernel/profiler/report.c kernel/profiler/fold.c kernel/profiler/run.c \
                          kernel/profiler/raw.c kernel/profiler/fields.c kernel/labels.c kernel/symbols.c \
                          kernel/lib/sink.c kernel/lib/format.c kernel/lib/string.c tests/unit/profiler_fold_fixture.c
test_pprof_encode_CFLAGS := -Wl,--wrap=kzalloc
test_pprof_encode_LIBS := -lz
