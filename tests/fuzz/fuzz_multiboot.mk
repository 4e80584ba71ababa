fuzz_multiboot_SRCS := arch/x86_64/multiboot.c
