# Sets of kernel sources (and the fakes that stand under them) that several host programs link together: the unit
# tests' lists (tests/unit/*.mk), the fuzz targets' (tests/fuzz/*.mk), the host tools' harnesses
# (tests/host/harnesses.mk) and the benchmarks' drivers (tests/bench/drivers.mk) name a group instead of
# repeating it. kernel/lib/ and the fakes of hal/ are in every program's core archive (HOST_CORE in the Makefile)
# and in no list.

# The fake kernel (tasks, the sleep, the symbol table, the stack walk, the console) under the kernel's own log.
FAKE_KERNEL_SRCS := tests/unit/fake_kernel.c kernel/log.c

# The kernel heap and its table of allocation chains (it walks its callers' chains through the fake kernel's tasks).
HEAP_SRCS := kernel/heap.c kernel/profiler/heap_sites.c $(FAKE_KERNEL_SRCS)

# The PMU layer: the backend choice, its report, the Intel and AMD backends and CPU identification, over the
# stateful fake CPU and its models, which log through the fake kernel.
PMU_SRCS := arch/x86_64/pmu.c arch/x86_64/pmu_report.c arch/x86_64/pmu_intel.c arch/x86_64/pmu_amd.c \
            arch/x86_64/cpu_identity.c tests/unit/fake_cpu.c tests/unit/fake_cpu_models.c $(FAKE_KERNEL_SRCS)

# The profiler: the sample path and run control, the fold and its report, raw lines and their fields, label
# sets and the symbol table.
PROFILER_SRCS := kernel/profiler.c kernel/profiler/tick_lateness.c kernel/profiler/wall.c kernel/profiler/options.c kernel/profiler/run.c kernel/profiler/fold.c kernel/profiler/report.c \
                 kernel/profiler/raw.c kernel/profiler/fields.c kernel/labels.c kernel/symbols.c

# The gdb stub's protocol engine over the fake target (fake_target.c: the machine it reads and stops).
GDBSTUB_SRCS := gdbstub/stub.c gdbstub/commands.c gdbstub/threads.c gdbstub/monitor.c gdbstub/regs.c \
                gdbstub/breakpoints.c gdbstub/packet.c tests/unit/fake_target.c

# The profile command with its stream form and their tasks, over the real profiler (tick source on the fake CPU),
# with the network and the rest of the command table faked.
CMD_PROFILE_SRCS := kernel/shell/command_table.c tests/unit/fake_commands.c kernel/shell/cmd_profile.c \
                    kernel/shell/cmd_profile_stream.c kernel/shell/cmd_profile_top.c kernel/profiler/top.c kernel/profiler/capture.c kernel/profiler/stream_codec.c \
                    kernel/profiler/stream_packer.c kernel/profiler/stream_request.c \
                    kernel/profiler/stream_task.c kernel/profiler/session.c kernel/profiler/args.c $(PROFILER_SRCS) $(HEAP_SRCS) \
                    $(PMU_SRCS) tests/unit/fake_net.c

# The tasks command, the task dump it prints and the symbol table its frame lines resolve through; the tasks, what
# they are doing and their chains are the fake kernel's or the program's own.
CMD_TASKS_SRCS := kernel/shell/cmd_tasks.c kernel/profiler/task_dump.c kernel/symbols.c

# `work`, the request-serving workload, with its command and the span log it shares with `burn`.
WORK_SRCS := kernel/shell/cmd_work.c kernel/workload/work.c kernel/workload/work_log.c kernel/workload/span_log.c

# `locks` and `lockfight` with what they read: the lock table and its slow path, the block table they share, the
# block profile's snapshot and order (whose encoder needs the pprof builder), and the start of a run's tasks
# (burn's too).
LOCKS_SRCS := kernel/shell/cmd_locks.c kernel/shell/cmd_lockfight.c kernel/shell/start_tasks.c \
              kernel/profiler/lock_sites.c kernel/profiler/block_sites.c kernel/profiler/block_profile.c \
              kernel/profiler/pprof_builder.c kernel/profiler/pb_writer.c

# The flame graph: its tree of a pprof fold and its SVG, with the symbol table it resolves through (the heap is the
# program's: the unit test's counting heap, the bench's kernel heap).
FLAME_SRCS := kernel/profiler/flame.c kernel/profiler/flame_svg.c kernel/symbols.c
