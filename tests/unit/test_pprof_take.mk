# A real profile over the fake CPUs (which have no PMU, so the tick is the source): run control, the pprof fold,
# encoder and gzip, labels, the kernel's heap over a static region.
test_pprof_take_SRCS := kernel/profiler/pprof.c kernel/profiler/pprof_fold.c kernel/profiler/pprof_encode.c \
                        kernel/profiler/pb_writer.c kernel/lib/gzip.c kernel/profiler.c kernel/profiler/run.c \
                        kernel/profiler/raw.c kernel/profiler/fields.c kernel/labels.c kernel/lib/parse.c kernel/heap.c \
                        kernel/symbols.c kernel/lib/sink.c kernel/lib/format.c kernel/lib/string.c arch/x86_64/pmu.c arch/x86_64/pmu_report.c \
                        arch/x86_64/pmu_intel.c arch/x86_64/pmu_amd.c arch/x86_64/cpu_identity.c tests/unit/fake_cpu.c \
                        tests/unit/fake_cpu_models.c
# Symbol lookups are counted (none may run in the window); kzalloc can be made to refuse (__wrap_*).
test_pprof_take_CFLAGS := -Wl,--wrap=symtab_lookup -Wl,--wrap=symtab_lookup_return -Wl,--wrap=kzalloc
test_pprof_take_LIBS := -lz
