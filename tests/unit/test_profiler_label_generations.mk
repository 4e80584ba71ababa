# A label set's slot freed and reused under an old record, and a sample committed after its run's last drain:
# the real profiler, labels pool and PMU driver on the fake CPU, every model.
test_profiler_label_generations_SRCS := $(PROFILER_SRCS) $(PMU_SRCS) tests/unit/profiler_counter_fixture.c
