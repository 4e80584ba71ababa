test_profiler_fold_chains_SRCS := kernel/lib/parse.c kernel/profiler/report.c kernel/profiler/fold.c kernel/profiler/run.c \
                                  kernel/profiler/raw.c kernel/profiler/fields.c kernel/labels.c kernel/symbols.c \
                                  kernel/lib/sink.c kernel/lib/format.c kernel/lib/string.c tests/unit/profiler_fold_fixture.c
