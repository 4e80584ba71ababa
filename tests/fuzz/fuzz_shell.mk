# The shell and every command in its table, with what they act on faked (fake_shell_env.c).
fuzz_shell_SRCS := kernel/shell/shell.c kernel/shell/command_table.c kernel/shell/lineedit.c \
                   kernel/shell/cmd_label.c kernel/shell/cmd_profile.c kernel/profiler/capture.c \
                   kernel/profiler/args.c kernel/shell/cmd_system.c kernel/shell/cmd_mem.c kernel/profiler/heap_profile.c \
                   kernel/profiler/pprof_builder.c kernel/profiler/pb_writer.c kernel/shell/cmd_netload.c \
                   kernel/shell/cmd_burn.c kernel/profiler.c kernel/profiler/tick_lateness.c kernel/profiler/wall.c kernel/profiler/options.c kernel/profiler/run.c kernel/profiler/fold.c \
                   kernel/profiler/report.c kernel/profiler/raw.c kernel/profiler/fields.c $(HEAP_SRCS) \
                   $(CMD_TASKS_SRCS) kernel/net/netload_proto.c $(PMU_SRCS) kernel/udpsh/wire.c \
                   kernel/shell/cmd_profile_stream.c kernel/shell/cmd_profile_top.c kernel/profiler/top.c \
                   kernel/profiler/stream_task.c kernel/profiler/stream_codec.c \
                   kernel/profiler/stream_packer.c kernel/profiler/stream_request.c \
                   kernel/profiler/session.c $(WORK_SRCS) $(LOCKS_SRCS) \
                   tests/fuzz/fake_shell_env.c
# fake_shell_env.c includes these itself, to empty their kernel-lifetime tables between inputs.
fuzz_shell_INCLUDED := kernel/labels.c kernel/net/netload.c
