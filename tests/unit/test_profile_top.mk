# The top table over real folds of hand-made records: the fold and report (whose source line and shares it
# prints), over the fold fixture's symbols and synthetic run.
test_profile_top_SRCS := kernel/profiler/top.c kernel/profiler/report.c kernel/profiler/fold.c kernel/profiler/run.c \
                         kernel/profiler/raw.c kernel/profiler/fields.c kernel/labels.c kernel/symbols.c \
                         tests/unit/profiler_fold_fixture.c tests/unit/counting_heap.c
