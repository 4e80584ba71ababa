# The label pool's readers on the real sample path (kernel/profiler.c) and the fake CPU: a set released while a
# sample holds it, on the tick and on a counter's NMI; a record copied into the window's capture.
test_profiler_labels_SRCS := kernel/profiler.c kernel/profiler/run.c kernel/profiler/capture.c kernel/profiler/fold.c \
                             kernel/profiler/report.c kernel/profiler/raw.c kernel/profiler/fields.c \
                             kernel/labels.c kernel/symbols.c kernel/lib/parse.c kernel/lib/sink.c \
                             kernel/lib/format.c kernel/lib/string.c arch/x86_64/pmu.c arch/x86_64/pmu_report.c arch/x86_64/pmu_intel.c \
                             arch/x86_64/pmu_amd.c arch/x86_64/cpu_identity.c tests/unit/fake_cpu.c \
                             tests/unit/fake_cpu_models.c
