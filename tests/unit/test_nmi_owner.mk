# Whose an NMI is: the decision of arch/x86_64/nmi_owner.c, scripted and over the real counter claim on the fake CPU.
test_nmi_owner_SRCS := $(PROFILER_SRCS) $(PMU_SRCS) tests/unit/profiler_counter_fixture.c arch/x86_64/nmi_owner.c
