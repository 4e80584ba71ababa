# The raw format's codec; raw.c's output of a run (tested in test_profiler_fold) needs run control's drain and the sink.
test_profiler_raw_SRCS := kernel/profiler/raw.c kernel/profiler/run.c kernel/profiler/fields.c kernel/labels.c
