test_cmd_work_SRCS := kernel/shell/command_table.c tests/unit/fake_commands.c $(WORK_SRCS) kernel/labels.c \
                      $(FAKE_KERNEL_SRCS)
