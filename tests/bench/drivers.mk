# The benchmarks' host drivers: tests/bench/NAME.c plus bench_NAME_SRCS, built in the bench variant (the kernel's
# own compiler and code generation for kernel sources; the host's for the drivers and fakes) by the Makefile's
# host_program. `make bench` measures with them under callgrind (tests/bench/NAME.sh); `make test` runs each once
# on a small input (scripts/bench-smoke.sh), so a list that no longer links fails the suite.
BENCH_NAMES := sample_cost pmu_nmi_cost wall_cost lock_cost heap_cost newcomer_cost flame_cost

# The sample path and its frame walk, the drain, the fold, the stream's packer and the pprof fold and encoder, on
# the fake CPU and the fake kernel (tests/unit/fake_kernel.c, through $(PMU_SRCS); the real walk wins over its).
bench_sample_cost_SRCS := $(PROFILER_SRCS) kernel/stacktrace.c kernel/profiler/pprof_fold.c \
                          kernel/profiler/pprof_encode.c kernel/profiler/pprof_builder.c kernel/profiler/pb_writer.c kernel/profiler/stream_codec.c \
                          kernel/profiler/stream_packer.c \
                          kernel/profiler/capture.c $(PMU_SRCS) tests/bench/bench_image.c tests/bench/bench_hw.c

# The PMU's NMI claim on the fake Intel v2 and AMD Zen 2 CPUs, and the NMI's owner decision with the boot CPU's
# port 0x61 read at the tick (arch/x86_64/nmi_owner.c, as interrupts.c runs it).
bench_pmu_nmi_cost_SRCS := $(PMU_SRCS) arch/x86_64/nmi_owner.c

# A wall run's sweep over one CPU's tasks, and what a context switch gained for it: the sweep and what a task is
# doing, the real walk and the real scheduler (kernel/task.c: its tasks, its list, their chains, the switch, each
# wait counted in the block table) in the fake kernel's place, over the fake CPU (the PMU layer less the fake
# kernel, which kernel/task.c replaces).
bench_wall_cost_SRCS := kernel/profiler.c kernel/profiler/tick_lateness.c kernel/profiler/wall.c kernel/profiler/options.c kernel/labels.c \
                        kernel/stacktrace.c kernel/task.c kernel/profiler/block_sites.c kernel/log.c \
                        $(filter-out $(FAKE_KERNEL_SRCS),$(PMU_SRCS)) tests/bench/bench_image.c

# A spinlock's acquisition, free and contended: the inline fast path, and the slow path that counts the wait
# (kernel/profiler/lock_sites.c) with the real walk and the real block table; the task is the driver's thread.
bench_lock_cost_SRCS := kernel/profiler/lock_sites.c kernel/profiler/block_sites.c kernel/stacktrace.c \
                        tests/bench/bench_task.c

# The heap profile's part of an allocation and a free: the heap, its table of chains and the real walk, over this
# thread's own stack (the driver is the current task).
bench_heap_cost_SRCS := kernel/heap.c kernel/profiler/heap_sites.c kernel/stacktrace.c tests/bench/bench_task.c

# The gdb UDP transport's answer to a newcomer's hello: the session nonce and the answer's MAC, two HMAC-SHA256s.
bench_newcomer_cost_SRCS := gdbstub/udp_auth.c kernel/net/keyed_service.c

# A flame graph of a full pprof fold: the tree and the SVG with the symbol table, linked from the unit test's very
# list (tests/unit/test_flame.mk: its counting heap over the C library's, which needs cmocka for its checks).
bench_flame_cost_SRCS := $(test_flame_SRCS)
bench_flame_cost_LIBS := -lcmocka
