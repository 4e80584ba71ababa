test_pprof_fold_SRCS := kernel/profiler/pprof_fold.c kernel/profiler/report.c kernel/profiler/fold.c \
                        kernel/profiler/run.c kernel/profiler/raw.c kernel/profiler/fields.c kernel/labels.c \
                        kernel/symbols.c tests/unit/profiler_fold_fixture.c tests/unit/counting_heap.c
