# The harnesses the host tools' tests (tests/host/test_*.py) drive kernel code through: tests/host/NAME.c plus
# harness_NAME_SRCS, built in harness_NAME_VARIANT (plain, or san under the sanitizers) from the same objects as
# the unit tests (the Makefile's host_program); each reads its commands through tests/host/harness_input.c. The
# tests ask make for them (host_build.py), so a change to a kernel source rebuilds its object once for every
# program that uses it.
HARNESS_NAMES := kernel_report kernel_stream pprof_harness

# prof.py's and profexport's fold and report, checked against the kernel's own.
harness_kernel_report_VARIANT := plain
harness_kernel_report_SRCS := tests/host/harness_input.c kernel/profiler/report.c kernel/profiler/fold.c \
                              kernel/profiler/run.c kernel/profiler/raw.c kernel/profiler/fields.c kernel/labels.c \
                              kernel/symbols.c

# The stream's packer, whose datagrams profexport --every decodes.
harness_kernel_stream_VARIANT := plain
harness_kernel_stream_SRCS := tests/host/harness_input.c kernel/profiler/stream_codec.c kernel/profiler/stream_packer.c kernel/profiler/run.c \
                              kernel/profiler/raw.c kernel/profiler/fields.c kernel/labels.c $(HEAP_SRCS) \
                              kernel/symbols.c

# The pprof fold and encoder behind /debug/pprof/profile, under the sanitizers.
harness_pprof_harness_VARIANT := san
harness_pprof_harness_SRCS := tests/host/harness_input.c kernel/profiler/pprof_encode.c kernel/profiler/pprof_builder.c \
                              kernel/profiler/pb_writer.c kernel/profiler/pprof_fold.c kernel/profiler/run.c \
                              kernel/labels.c kernel/symbols.c
