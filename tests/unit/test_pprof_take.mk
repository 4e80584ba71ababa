# A real profile over the fake CPUs (which have no PMU, so the tick is the source): run control, the pprof fold,
# encoder and gzip, labels, the kernel's heap over a static region.
test_pprof_take_SRCS := kernel/profiler/pprof.c kernel/profiler/flame.c kernel/profiler/flame_svg.c kernel/profiler/pprof_fold.c kernel/profiler/pprof_encode.c \
                        kernel/profiler/pprof_builder.c kernel/profiler/pb_writer.c kernel/profiler.c kernel/profiler/tick_lateness.c kernel/profiler/wall.c \
                        kernel/profiler/options.c kernel/profiler/run.c kernel/profiler/session.c kernel/profiler/raw.c \
                        kernel/profiler/fields.c kernel/labels.c $(HEAP_SRCS) kernel/symbols.c $(PMU_SRCS) \
                        tests/unit/profiler_burn_fixture.c tests/unit/spawned_task.c
# Symbol lookups are counted (none may run in the window); kzalloc can be made to refuse (__wrap_*).
test_pprof_take_LDFLAGS := -Wl,--wrap=symtab_lookup -Wl,--wrap=symtab_lookup_return -Wl,--wrap=kzalloc
test_pprof_take_LIBS := -lz
