# The label pool's readers on the real sample path (kernel/profiler.c) and the fake CPU: a set released while a
# sample holds it, on the tick and on a counter's NMI; a record copied into the window's capture.
test_profiler_labels_SRCS := $(PROFILER_SRCS) kernel/profiler/capture.c $(PMU_SRCS)
