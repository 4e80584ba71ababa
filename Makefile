# kprof build: the kernel ELF (linked in passes until its baked symbol table stops moving), the ISO, QEMU
# targets for people (run, debug) and the test and benchmark suites. `make help` lists the targets.

BUILD   := build
SMP     ?= 4
MEM     ?= 256
CMDLINE ?=
FIRMWARE ?= bios
ACCEL   ?= tcg
GDB_PORT ?= 1234
UDPSH_PORT   ?= 5555
NETLOAD_PORT ?= 5556
NIC     ?= virtio-legacy
PY      := /usr/bin/python3
# The Python tools (scripts/udpsh, netload, profexport, prof.py's relay...) start with `#!/usr/bin/env python3`.
# Under make they run on PY, the interpreter deps.sh gave the packages they import, not on the first python3 of
# the caller's PATH (on this machine a pyenv shim that took a second to start each one: hundreds of tool runs
# per `make test`). build/pybin holds only a python3 link to PY, so nothing else on PATH changes.
PYBIN   := $(CURDIR)/$(BUILD)/pybin
export PATH := $(PYBIN):$(PATH)

# ---- kernel -----------------------------------------------------------------------------------------------
# The kernel's C is compiled with clang: GCC 12 ignores -mno-omit-leaf-frame-pointer on x86_64, and a leaf
# function without a frame hides its caller from every stack walk and profile. Sibling-call optimisation is
# off for the same reason (a tail call erases the caller's frame). The assembly uses GNU as through gcc.
KCC      := clang
KCFLAGS  := -std=c11 -ffreestanding -mno-red-zone -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
            -mgeneral-regs-only -Wall -Wextra -Werror -O2 -g -fno-pic -fno-pie -fno-stack-protector \
            -fcf-protection=none -fno-asynchronous-unwind-tables -fno-optimize-sibling-calls -mcmodel=small \
            -I. -MMD -MP
KAS      := gcc
KASFLAGS := -I. -g -MMD -MP
KSRCS   := $(sort $(wildcard arch/x86_64/*.c arch/x86_64/*.S kernel/*.c kernel/*/*.c kernel/drivers/*/*.c \
                             kernel/net/lwip/*.c gdbstub/*.c))
# Generated C, under build/ like every build output: the framebuffer console's font, from the glyphs drawn in
# scripts/genfont.py.
KGEN    := $(BUILD)/gen/font8x16.c
KOBJS   := $(patsubst %,$(BUILD)/k/%.o,$(KSRCS) $(KGEN))

# pprof's schema for Python too: scripts/profexport and scripts/prof.py work after plain `make`.
all: $(BUILD)/kprof.elf $(BUILD)/kprof.iso $(BUILD)/pprof/profile_pb2.py $(PYBIN)/python3

$(PYBIN)/python3:
	@mkdir -p $(dir $@)
	ln -sf $(PY) $@

$(BUILD)/k/%.c.o: %.c $(BUILD)/kflags
	@mkdir -p $(dir $@)
	$(KCC) $(KCFLAGS) -c $< -o $@

$(BUILD)/gen/font8x16.c: scripts/genfont.py
	@mkdir -p $(dir $@)
	$(PY) scripts/genfont.py $@

$(BUILD)/k/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(KAS) $(KASFLAGS) -c $< -o $@

# ---- lwIP ---------------------------------------------------------------------------------------------------
# lwIP comes from Debian's source package, unpacked into build/lwip-src by scripts/deps.sh (never committed;
# plain `make` runs it when the tree is missing). Built: the core, IPv4 (ARP, ICMP, DHCP, fragmentation), TCP
# (for the pprof.http= server, kernel/httpd/) and the Ethernet layer -- not DNS, raw sockets, IGMP, AutoIP,
# IPv6, the sequential/socket APIs or the apps, which lwipopts.h turns off. The ABI flags are the kernel's (KCFLAGS less its warnings); our port headers
# (kernel/net/lwip/lwipopts.h, kernel/net/lwip/arch/cc.h and the libc shims in kernel/net/lwip/include) come first, and
# -nostdinc keeps the host's C library out: only the compiler's freestanding headers remain. lwIP's own
# warnings are not ours to fix, so its files build without -Wall -Werror; kernel/net/*.c keeps the full set.
LWIP_SRC    := $(BUILD)/lwip-src
LWIP_FILES  := core/def.c core/inet_chksum.c core/init.c core/ip.c core/mem.c core/memp.c core/netif.c \
               core/pbuf.c core/stats.c core/sys.c core/timeouts.c core/udp.c core/tcp.c core/tcp_in.c core/tcp_out.c \
               core/ipv4/dhcp.c core/ipv4/etharp.c core/ipv4/icmp.c core/ipv4/ip4.c core/ipv4/ip4_addr.c \
               core/ipv4/ip4_frag.c netif/ethernet.c
LWIP_SRCS   := $(addprefix $(LWIP_SRC)/src/,$(LWIP_FILES))
LWIP_OBJS   := $(patsubst %.c,$(BUILD)/lwip/%.o,$(LWIP_FILES))
LWIP_INC    := -Ikernel/net/lwip/include -Ikernel/net/lwip -I$(LWIP_SRC)/src/include
LWIP_CFLAGS := $(filter-out -W% -I%,$(KCFLAGS)) -nostdinc -isystem $(shell $(KCC) -print-resource-dir)/include \
               $(LWIP_INC) -I.

$(LWIP_SRCS) &:
	@scripts/deps.sh

$(LWIP_OBJS): $(BUILD)/lwip/%.o: $(LWIP_SRC)/src/%.c $(BUILD)/lwipflags
	@mkdir -p $(dir $@)
	$(KCC) $(LWIP_CFLAGS) -c $< -o $@

# kernel/net is the kernel side of lwIP: full warnings, and lwIP's headers behind ours. The HTTP server's TCP
# side (kernel/httpd/httpd.c) runs in the network task and calls lwIP's TCP API too.
$(BUILD)/k/kernel/net/%.c.o: kernel/net/%.c $(BUILD)/kflags | $(LWIP_SRCS)
	@mkdir -p $(dir $@)
	$(KCC) $(LWIP_INC) $(KCFLAGS) -c $< -o $@
$(BUILD)/k/kernel/httpd/httpd.c.o: kernel/httpd/httpd.c $(BUILD)/kflags | $(LWIP_SRCS)
	@mkdir -p $(dir $@)
	$(KCC) $(LWIP_INC) $(KCFLAGS) -c $< -o $@

# The symbol table is generated from `nm` of the previous pass and linked in; scripts/link.sh repeats until
# the text addresses of two passes agree, so the table inside the final image describes that image.
$(BUILD)/kprof.elf: $(KOBJS) $(LWIP_OBJS) arch/x86_64/linker.ld scripts/link.sh scripts/gensyms.py
	KCC="$(KCC)" KCFLAGS="$(KCFLAGS)" scripts/link.sh $(BUILD) $(KOBJS) $(LWIP_OBJS)

$(BUILD)/kprof.iso: $(BUILD)/kprof.elf grub.cfg scripts/mkiso.sh
	scripts/mkiso.sh $< $@

-include $(KOBJS:.o=.d) $(LWIP_OBJS:.o=.d)

# Objects depend on the flags they were built with: a changed flag rebuilds everything.
$(BUILD)/kflags: FORCE
	@mkdir -p $(BUILD)
	@echo '$(KCC) $(KCFLAGS)' | cmp -s - $@ || echo '$(KCC) $(KCFLAGS)' > $@
$(BUILD)/lwipflags: FORCE
	@mkdir -p $(BUILD)
	@echo '$(KCC) $(LWIP_CFLAGS)' | cmp -s - $@ || echo '$(KCC) $(LWIP_CFLAGS)' > $@
FORCE:

# ---- pprof schema -------------------------------------------------------------------------------------------
# scripts/profexport and scripts/prof.py write pprof's profile.proto through the Python module protoc generates
# from the schema Debian's golang-github-google-pprof-dev ships (python3-protobuf runs it); nothing hand-encodes
# protobuf. Plain `make` builds it (the tools also generate it themselves when it is missing).
PPROF_PROTO_DIR := /usr/share/gocode/src/github.com/google/pprof/proto

$(BUILD)/pprof/profile_pb2.py: $(PPROF_PROTO_DIR)/profile.proto
	@mkdir -p $(dir $@)
	protoc --proto_path=$(PPROF_PROTO_DIR) --python_out=$(dir $@) $<

$(PPROF_PROTO_DIR)/profile.proto:
	@scripts/deps.sh

# ---- running ------------------------------------------------------------------------------------------------
deps:
	@scripts/deps.sh

run: deps
	@$(MAKE) --no-print-directory all
	@scripts/qemu.sh --smp $(SMP) --mem $(MEM) --cmdline "$(CMDLINE)" --udp-port $(UDPSH_PORT) --netload-port $(NETLOAD_PORT) --nic $(NIC) --firmware $(FIRMWARE) --accel $(ACCEL)

# gdb=wait, COM2 on 127.0.0.1:$(GDB_PORT), and gdb on build/kprof.elf with a generated build/gdbinit;
# GDB=udp: the stub over UDP instead (gdb.udp=1234, host UDP port $(GDB_PORT) forwarded to it).
GDB ?= com2
debug: deps
	@$(MAKE) --no-print-directory all
	@scripts/debug.sh --smp $(SMP) --mem $(MEM) --cmdline "$(CMDLINE)" --gdb-port $(GDB_PORT) --firmware $(FIRMWARE) --transport $(GDB)

# ---- tests --------------------------------------------------------------------------------------------------
# Every host program (unit tests, fuzz targets, the host tools' harnesses, the benchmarks' drivers) links kernel
# sources compiled for the host ONCE per variant into build/host/VARIANT/<path>.o, with the dependency files the
# compiler writes (a change to one kernel file rebuilds its object and relinks what uses it):
#   plain  gcc, the unit tests' flags            san    the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   fuzz   clang with libFuzzer, ASan + UBSan    bench  the kernel's own compiler and code generation (KCFLAGS)
# Each variant also has build/host/VARIANT/libcore.a: kernel/lib/ and the fakes of hal/ (HOST_CORE). A program
# links its own list first and the core archive last, so it takes from the core only what it still needs and a
# fake of its own wins. A list (NAME_SRCS in its .mk) names what it needs beyond the core, through the groups of
# tests/unit/groups.mk where several programs need the same set. NAME_CFLAGS are compile flags that change the
# code (a -D, an -include): that program gets objects of its own (build/host/VARIANT-NAME/); NAME_LDFLAGS are
# link flags (--wrap); NAME_LIBS libraries (zlib, cmocka for fuzz targets that report through it).
HCC        := gcc
HCFLAGS    := -std=gnu11 -g -O1 -Wall -Wextra -Werror -I. -Itests/unit -DKPROF_HOST -fno-omit-frame-pointer
SANFLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=all
FCC        := clang
FCFLAGS    := -std=gnu11 -g -O1 -Wall -Wextra -Werror -I. -Itests/unit -Itests/fuzz -DKPROF_HOST \
              -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
# The benchmarks measure the kernel's own code generation: its compiler and flags (less dependency files), with
# KPROF_HOST so the sources use their host fallbacks, and DWARF 4, which Debian 12's valgrind reads (clang's
# default DWARF 5 it cannot; the code is the same). Their drivers and the fakes are built the same way.
BCFLAGS    := $(filter-out -MMD -MP,$(KCFLAGS)) -DKPROF_HOST -Itests/unit -gdwarf-4
HOST_CC_plain := $(HCC)
HOST_CC_san   := $(HCC)
HOST_CC_fuzz  := $(FCC)
HOST_CC_bench := $(KCC)
HOST_FLAGS_plain := $(HCFLAGS)
HOST_FLAGS_san   := $(HCFLAGS) $(SANFLAGS)
HOST_FLAGS_fuzz  := $(FCFLAGS)
HOST_FLAGS_bench := $(BCFLAGS)
# Linking: the sanitizers' and libFuzzer's runtimes come with their flags; the bench's objects are not PIE.
HOST_LD_plain := $(HCC)
HOST_LD_san   := $(HCC) $(SANFLAGS)
HOST_LD_fuzz  := $(FCC) -fsanitize=fuzzer,address,undefined
HOST_LD_bench := $(HCC) -no-pie
# In the bench variant the drivers and fakes (tests/) are host code: the C library, the host's compiler.
BENCH_HOST_FLAGS := -std=gnu11 -O2 -gdwarf-4 -Wall -Wextra -Werror -DKPROF_HOST -I. -Itests/unit \
                    -fno-omit-frame-pointer -fno-pie
HOST_CORE := $(wildcard kernel/lib/*.c) tests/unit/fake_hal.c
HOST_VARIANTS := plain san fuzz bench

# host_objs VARIANT-DIR SOURCES: the objects of SOURCES in build/host/VARIANT-DIR.
host_objs = $(patsubst %.c,$(BUILD)/host/$(1)/%.o,$(filter %.c,$(2)))

include tests/unit/groups.mk

define host_variant_rules
$(BUILD)/host/$(1)/%.o: %.c $(BUILD)/host/$(1).flags
	@mkdir -p $$(dir $$@)
	$(HOST_CC_$(1)) $(HOST_FLAGS_$(1)) -MMD -MP -c $$< -o $$@
ifeq ($(1),bench)
$(BUILD)/host/bench/tests/%.o: tests/%.c $(BUILD)/host/bench.flags
	@mkdir -p $$(dir $$@)
	$(HCC) $(BENCH_HOST_FLAGS) -MMD -MP -c $$< -o $$@
endif
$(BUILD)/host/$(1)/libcore.a: $(call host_objs,$(1),$(HOST_CORE))
	@rm -f $$@
	ar rcs $$@ $$^
$(BUILD)/host/$(1).flags: FORCE
	@mkdir -p $$(dir $$@)
	@echo '$(HOST_CC_$(1)) $(HOST_FLAGS_$(1)) $(HOST_LD_$(1))' | cmp -s - $$@ || \
	  echo '$(HOST_CC_$(1)) $(HOST_FLAGS_$(1)) $(HOST_LD_$(1))' > $$@
endef
$(foreach v,$(HOST_VARIANTS),$(eval $(call host_variant_rules,$(v))))

# host_program OUTPUT VARIANT NAME PREFIX MAIN: OUTPUT linked from MAIN, $(PREFIX_NAME_SRCS) and the core, in
# VARIANT; with PREFIX_NAME_CFLAGS set, from objects of its own compiled with them.
define host_program
$(eval $(call host_program_dir,$(1),$(2),$(if $($(4)_$(3)_CFLAGS),$(2)-$(3),$(2)),$(4)_$(3),$(5)))
endef
define host_program_dir
ifneq ($(3),$(2))
$(BUILD)/host/$(3)/%.o: %.c $(BUILD)/host/$(2).flags
	@mkdir -p $$(dir $$@)
	$(HOST_CC_$(2)) $(HOST_FLAGS_$(2)) $$($(4)_CFLAGS) -MMD -MP -c $$< -o $$@
$(BUILD)/host/$(3)/libcore.a: $(call host_objs,$(3),$(HOST_CORE))
	@rm -f $$@
	ar rcs $$@ $$^
endif
$(1): $(call host_objs,$(3),$(5) $($(4)_SRCS)) $(BUILD)/host/$(3)/libcore.a
	@mkdir -p $$(dir $$@)
	$(HOST_LD_$(2)) $$($(4)_LDFLAGS) -o $$@ $$^ $$($(4)_LIBS)
endef

-include $(shell find $(BUILD)/host -name '*.d' 2>/dev/null)

# Host unit tests: tests/unit/test_NAME.c plus test_NAME_SRCS (tests/unit/test_NAME.mk), built plain and
# sanitised.
UNIT_NAMES := $(patsubst tests/unit/test_%.c,%,$(wildcard tests/unit/test_*.c))
-include $(wildcard tests/unit/test_*.mk)
$(foreach n,$(UNIT_NAMES),$(eval test_$(n)_LIBS += -lcmocka -lpthread))
$(foreach n,$(UNIT_NAMES),$(foreach v,plain san,\
  $(call host_program,$(BUILD)/unit/$(v)/test_$(n),$(v),$(n),test,tests/unit/test_$(n).c)))
UNIT_BINS := $(foreach n,$(UNIT_NAMES),$(BUILD)/unit/plain/test_$(n) $(BUILD)/unit/san/test_$(n))

unit: $(UNIT_BINS)
	@scripts/run-unit.sh $(UNIT_BINS)

# Fuzz targets: tests/fuzz/fuzz_NAME.c plus fuzz_NAME_SRCS (tests/fuzz/fuzz_NAME.mk), the real parsers with
# fakes only for what they call. `make fuzz` fuzzes each for FUZZ_SECONDS; new inputs it finds go to
# build/fuzz/corpus/NAME, never into the committed seeds (tests/fuzz/corpus/NAME). `make fuzz-regress` (part
# of `make test`) replays the seeds and every input that once crashed (tests/fuzz/regressions/NAME) and then
# fuzzes a fixed number of runs from a fixed seed, so it is deterministic and short enough for every CI run.
# A kernel source a fake #includes (to reach its statics) is rebuilt through the dependency files.
FUZZ_NAMES  := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 60
FUZZ_RUNS   ?= 50000
-include $(wildcard tests/fuzz/fuzz_*.mk)
$(foreach n,$(FUZZ_NAMES),$(call host_program,$(BUILD)/fuzz/fuzz_$(n),fuzz,$(n),fuzz,tests/fuzz/fuzz_$(n).c))
FUZZ_BINS := $(foreach n,$(FUZZ_NAMES),$(BUILD)/fuzz/fuzz_$(n))

# `make fuzz` under nice: for FUZZ_SECONDS a target, the fuzzers would otherwise take every core from whoever else
# uses the machine. fuzz-regress is a fixed, short part of `make test` and runs at the suite's own priority, so
# the suite's time does not hang on other work (under nice, two busy loops beside it slowed it tenfold).
fuzz: $(FUZZ_BINS)
	@nice -n 10 scripts/run-fuzz.sh fuzz $(FUZZ_SECONDS) $(FUZZ_BINS)

# A target whose inputs are slow to run (fuzz_NAME_RUNS in its .mk) takes fewer of the fixed runs, so no one target
# holds the phase up; its seeds and regressions are all replayed whatever the number.
fuzz-regress: $(FUZZ_BINS)
	@scripts/run-fuzz.sh regress $(FUZZ_RUNS) $(foreach n,$(FUZZ_NAMES),$(BUILD)/fuzz/fuzz_$(n)$(if $(fuzz_$(n)_RUNS),@$(fuzz_$(n)_RUNS)))

# The host tools' tests drive kernel code through small harnesses (tests/host/NAME.c, harness_NAME_SRCS in
# tests/host/harnesses.mk), built plain or sanitised as each test needs, from the same objects.
include tests/host/harnesses.mk
$(foreach n,$(HARNESS_NAMES),$(call host_program,$(BUILD)/harness/$(n),$(harness_$(n)_VARIANT),$(n),harness,tests/host/$(n).c))
HARNESS_BINS := $(foreach n,$(HARNESS_NAMES),$(BUILD)/harness/$(n))
harnesses: $(HARNESS_BINS)

# The benchmarks' host drivers (tests/bench/NAME.c, bench_NAME_SRCS in tests/bench/drivers.mk), in the kernel's
# own code generation. `make test` builds them and runs each once on a small input (bench-smoke), figures not
# judged, so a driver that no longer builds or runs fails the suite; `make bench` measures with them.
include tests/bench/drivers.mk
$(foreach n,$(BENCH_NAMES),$(call host_program,$(BUILD)/bench/$(n),bench,$(n),bench,tests/bench/$(n).c))
BENCH_BINS := $(foreach n,$(BENCH_NAMES),$(BUILD)/bench/$(n))
bench-drivers: $(BENCH_BINS)
# For tests/bench/sample_cost.sh, which builds the same driver over an older tree to compare: a driver's list
# (the core's included) and the two sets of flags.
bench-srcs-%:
	@echo $(bench_$*_SRCS) $(HOST_CORE)
bench-flags:
	@echo 'kernel: $(KCC) $(BCFLAGS)'
	@echo 'host: $(BENCH_HOST_FLAGS)'
bench-smoke: $(BENCH_BINS) $(PYBIN)/python3
	@scripts/bench-smoke.sh $(BENCH_BINS)

# Host tests of the Python tools (prof.py's and profexport's logic), no QEMU, in HOST_WORKERS processes: most of
# their time is a tool's own timeout running out (a silent host, a relay's resend), not the CPU.
HOST_WORKERS ?= 3
host: $(BUILD)/pprof/profile_pb2.py harnesses $(PYBIN)/python3
	$(PY) -m pytest -q -p no:cacheprovider $(if $(filter-out 0 1,$(HOST_WORKERS)),-n $(HOST_WORKERS) --dist load) \
	  tests/host

# Integration modules run in two lanes. The wire lane: the modules that mostly wait on the wire, not the CPU (quiet
# windows after forged frames, where nothing may answer and nothing says "nothing"; gdb's and the clients' own
# timeouts; floods paced by the clock), one after another in one process -- measured beside the rest, 353 s of
# wall time for 90 s of CPU. The CPU lane: every other module, in INTEGRATION_WORKERS processes (pytest-xdist, a
# module's tests together in one), the slowest named at the end. Two workers on two cores: three took the CPU
# modules from 580 s to 430 s but starved the tick-window tests past their retries (test_profile, 1 run in 5
# here); INTEGRATION_WORKERS=3 runs it so. `make test` runs the two lanes side by side (scripts/test-phases.sh),
# so the wire's waits overlap the CPU's work; `make integration` runs them one after the other. `make test`
# leaves out the full_only tests and runs the scaled ones short; `make test-full` runs those two kinds in their
# full forms (tests/integration/conftest.py says which is which).
WIRE_MODULES := $(addprefix tests/integration/,test_udpsh_forged.py test_gdb_forged.py test_httpd.py \
                  test_gdb_relay.py test_nics.py test_httpd_abuse.py)
# test_kvm.py (two PVM boots, ~150 s of a busy host CPU where /dev/kvm is usable) is a lane of its own, run after
# the other two have finished: beside the CPU lane's tick-window tests it starved them (clean-clone runs each
# failed one such test while it ran; put last in the wire lane, it still overlapped the CPU lane's last 50 s and
# starved test_profile through all five of its attempts).
KVM_MODULES := tests/integration/test_kvm.py
INTEGRATION_WORKERS ?= 2
PYTEST_WORKERS = $(if $(filter-out 0 1,$(INTEGRATION_WORKERS)),-n $(INTEGRATION_WORKERS) --dist loadgroup)
INTEGRATION_PYTEST = $(PY) -m pytest -q -p no:cacheprovider --durations=12 -m "not full_only"
integration: integration-cpu integration-wire integration-kvm

integration-cpu: all $(BUILD)/pprof/profile_pb2.py
	KPROF_LANE=cpu $(INTEGRATION_PYTEST) $(PYTEST_WORKERS) $(addprefix --ignore=,$(WIRE_MODULES) $(KVM_MODULES)) \
	  tests/integration

integration-wire: all $(BUILD)/pprof/profile_pb2.py
	KPROF_LANE=wire $(INTEGRATION_PYTEST) $(WIRE_MODULES)

integration-kvm: all $(BUILD)/pprof/profile_pb2.py
	KPROF_LANE=kvm $(INTEGRATION_PYTEST) $(KVM_MODULES)

test-full: all $(BUILD)/pprof/profile_pb2.py
	KPROF_FULL=1 $(PY) -m pytest -q -p no:cacheprovider $(PYTEST_WORKERS) --durations=12 -m "full_only or scaled" \
	  tests/integration

# The breakpoint sweep in full (tests/integration/test_gdb_safety.py): every function of the debugger's own
# code through breakpoint, continue, stepi, read and Ctrl-C, the whole edge and a larger sample of the rest;
# `make test` runs the short version, `make test-full` this one among the others. Several minutes under TCG.
gdb-sweep: all
	KPROF_GDB_SWEEP=full $(PY) -m pytest -q -p no:cacheprovider tests/integration/test_gdb_safety.py

# The soak (tests/soak/soak.py): one kernel driven for SOAK_ROUNDS rounds of profiles, netload floods, label
# changes, junk lines and datagrams and gdb attaches, then heap, tasks, stacks and lwIP compared with the
# baseline; it prints its figures. SOAK_SEED replays a run. soak-short is the few rounds `make test` runs.
# Then the stream leg (tests/soak/stream_soak.py): SOAK_STREAM_SECONDS of `profile stream` at profile.hz=1000
# on 4 busy CPUs while the shell is used, every sample accounted for and the heap back to its baseline; then, on
# the same kernel, its wall leg: SOAK_WALL_SECONDS of a wall stream with `work` tasks serving spans beside it.
SOAK_ROUNDS ?= 30
SOAK_SHORT_ROUNDS ?= 4
SOAK_STREAM_SECONDS ?= 600
SOAK_SHORT_STREAM_SECONDS ?= 15
SOAK_WALL_SECONDS ?= 600
SOAK_SHORT_WALL_SECONDS ?= 10
SOAK_SEED ?=

soak: all
	SOAK_SEED=$(SOAK_SEED) $(PY) tests/soak/soak.py --rounds $(SOAK_ROUNDS)
	SOAK_SEED=$(SOAK_SEED) $(PY) tests/soak/stream_soak.py --seconds $(SOAK_STREAM_SECONDS) \
	  --wall-seconds $(SOAK_WALL_SECONDS)

soak-short: all
	SOAK_SEED=$(SOAK_SEED) $(PY) tests/soak/soak.py --rounds $(SOAK_SHORT_ROUNDS)
	SOAK_SEED=$(SOAK_SEED) $(PY) tests/soak/stream_soak.py --seconds $(SOAK_SHORT_STREAM_SECONDS) \
	  --wall-seconds $(SOAK_SHORT_WALL_SECONDS)

# The builds under each phase run JOBS at a time (one per core); integration modules run in INTEGRATION_WORKERS
# processes (tests/integration/conftest.py). scripts/test-phases.sh runs the phases in order, times each and ends
# with their runners' summaries.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

test:
	@JOBS=$(JOBS) scripts/test-phases.sh

bench: deps
	@$(MAKE) --no-print-directory all
	$(PY) tests/bench/run.py

# The counter path end to end under KVM with the host's CPU (tests/pmu_check.py), for machines with real
# counters; not part of `make test`. Without a counter to check (no usable /dev/kvm, or lscpu says the tick)
# it says so in one line and exits 77.
pmu-check: all
	$(PY) tests/pmu_check.py

clean:
	rm -rf $(BUILD)

help:
	@echo "make            build build/kprof.elf and build/kprof.iso"
	@echo "make run        boot in QEMU (SMP=$(SMP) MEM=$(MEM) CMDLINE=... FIRMWARE=bios|uefi NIC=virtio-legacy|virtio-modern|e1000|e1000e ACCEL=tcg|kvm), console on this terminal"
	@echo "make debug      boot with gdb=wait and run gdb on it over COM2 (GDB_PORT=$(GDB_PORT) FIRMWARE=bios|uefi); GDB=udp: over UDP (gdb.udp=)"
	@echo "make test       unit tests (plain and sanitised), fuzz regressions, host tool tests, bench drivers once, QEMU integration tests, soak-short"
	@echo "make test-full  the long forms of the tests make test runs short (INTEGRATION_WORKERS=$(INTEGRATION_WORKERS))"
	@echo "make fuzz       fuzz every parser of outside input for FUZZ_SECONDS=$(FUZZ_SECONDS) each"
	@echo "make soak       the soak: SOAK_ROUNDS=$(SOAK_ROUNDS) rounds of everything, then leaks and lost tasks checked; then SOAK_STREAM_SECONDS=$(SOAK_STREAM_SECONDS) s of profile stream and SOAK_WALL_SECONDS=$(SOAK_WALL_SECONDS) s of a wall stream"
	@echo "make gdb-sweep  a breakpoint on every function of the debugger's own code and on a sample of the rest"
	@echo "make bench      print the benchmark figures"
	@echo "make pmu-check  the counter path end to end under KVM -cpu host (real counters only; 77 without one)"

.PHONY: test-full all deps run debug unit fuzz fuzz-regress host harnesses bench-drivers bench-smoke bench-flags integration integration-cpu integration-wire integration-kvm gdb-sweep soak soak-short test bench pmu-check clean help
