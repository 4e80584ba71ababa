test_fixup_SRCS := arch/x86_64/msr.c arch/x86_64/fixup.c
# The __ex_table entries are absolute addresses, as in the kernel: link without PIE so they need no
# dynamic relocations in a read-only section.
test_fixup_CFLAGS := -fno-pie
test_fixup_LDFLAGS := -no-pie
