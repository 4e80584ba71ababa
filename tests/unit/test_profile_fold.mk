test_profile_fold_SRCS := kernel/profile_report.c kernel/profile_raw.c kernel/labels.c kernel/symbols.c kernel/sink.c kernel/format.c kernel/string.c
