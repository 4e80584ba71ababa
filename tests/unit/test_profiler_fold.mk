test_profiler_fold_SRCS := kernel/profiler_report.c kernel/profiler_raw.c kernel/fields.c kernel/labels.c kernel/symbols.c kernel/sink.c kernel/format.c kernel/string.c
