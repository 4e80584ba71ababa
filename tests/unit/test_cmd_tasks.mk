# The tasks command over the test's own task table (task_for_each), the fake kernel's chains, real label sets,
# the real command table (its usage line) and a counting heap.
test_cmd_tasks_SRCS := $(CMD_TASKS_SRCS) kernel/shell/command_table.c tests/unit/fake_commands.c kernel/labels.c \
                       tests/unit/counting_heap.c $(FAKE_KERNEL_SRCS)
