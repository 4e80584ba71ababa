test_labels_SRCS := kernel/shell/command_table.c tests/unit/fake_commands.c kernel/labels.c \
                    kernel/shell/cmd_label.c $(FAKE_KERNEL_SRCS)
