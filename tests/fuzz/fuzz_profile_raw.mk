fuzz_profile_raw_SRCS := kernel/profile_raw.c kernel/labels.c kernel/string.c
