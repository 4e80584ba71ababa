# Run control's consumer side over synthetic rings: the one drain, the one drop count, the one window.
test_profiler_run_SRCS := kernel/profiler/run.c kernel/labels.c
