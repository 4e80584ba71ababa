# Run control's consumer side over synthetic rings: the one drain, the one drop count, the one window.
test_profiler_run_SRCS := kernel/lib/sink.c kernel/lib/format.c kernel/lib/parse.c kernel/profiler/run.c kernel/labels.c kernel/lib/string.c
