# `locks` and `lockfight` over the kernel's lock table, the fake kernel's image and the test's own task_spawn, with
# the real command table (their usage lines) and a counting heap.
test_cmd_locks_SRCS := $(LOCKS_SRCS) kernel/symbols.c kernel/shell/command_table.c tests/unit/fake_commands.c \
                       tests/unit/counting_heap.c $(FAKE_KERNEL_SRCS)
