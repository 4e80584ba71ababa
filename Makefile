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
KSRCS   := $(sort $(wildcard arch/x86_64/*.c arch/x86_64/*.S kernel/*.c kernel/*/*.c kernel/net/lwip/*.c gdbstub/*.c))
# Generated C, under build/ like every build output: the framebuffer console's font, from the glyphs drawn in
# scripts/genfont.py.
KGEN    := $(BUILD)/gen/font8x16.c
KOBJS   := $(patsubst %,$(BUILD)/k/%.o,$(KSRCS) $(KGEN))

# pprof's schema for Python too: scripts/profexport and scripts/prof.py work after plain `make`.
all: $(BUILD)/kprof.elf $(BUILD)/kprof.iso $(BUILD)/pprof/profile_pb2.py

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
# Host unit tests: tests/unit/test_NAME.c plus the portable sources its test_NAME.mk names in test_NAME_SRCS,
# built twice: plain, and under AddressSanitizer + UndefinedBehaviorSanitizer.
# test_NAME_LIBS: libraries it links besides cmocka (zlib, the reference test_gzip checks against).
HCC        := gcc
HCFLAGS    := -std=gnu11 -g -O1 -Wall -Wextra -Werror -I. -Itests/unit -DKPROF_HOST -fno-omit-frame-pointer
SANFLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=all
UNIT_NAMES := $(patsubst tests/unit/test_%.c,%,$(wildcard tests/unit/test_*.c))
-include $(wildcard tests/unit/test_*.mk)

define unit_rules
$(BUILD)/unit/plain/test_$(1): tests/unit/test_$(1).c $$(test_$(1)_SRCS) tests/unit/fake_hal.c $(wildcard tests/unit/*.h) $(wildcard kernel/*.h kernel/*/*.h hal/*.h gdbstub/*.h)
	@mkdir -p $$(dir $$@)
	$(HCC) $(HCFLAGS) $$(test_$(1)_CFLAGS) -o $$@ $$(filter %.c,$$^) $$(test_$(1)_LIBS) -lcmocka -lpthread
$(BUILD)/unit/san/test_$(1): tests/unit/test_$(1).c $$(test_$(1)_SRCS) tests/unit/fake_hal.c $(wildcard tests/unit/*.h) $(wildcard kernel/*.h kernel/*/*.h hal/*.h gdbstub/*.h)
	@mkdir -p $$(dir $$@)
	$(HCC) $(HCFLAGS) $(SANFLAGS) $$(test_$(1)_CFLAGS) -o $$@ $$(filter %.c,$$^) $$(test_$(1)_LIBS) -lcmocka -lpthread
endef
$(foreach n,$(UNIT_NAMES),$(eval $(call unit_rules,$(n))))

UNIT_BINS := $(foreach n,$(UNIT_NAMES),$(BUILD)/unit/plain/test_$(n) $(BUILD)/unit/san/test_$(n))

unit: $(UNIT_BINS)
	@scripts/run-unit.sh $(UNIT_BINS)

# Fuzz targets: tests/fuzz/fuzz_NAME.c plus the kernel sources its fuzz_NAME.mk names in fuzz_NAME_SRCS, built
# for the host with clang's libFuzzer under AddressSanitizer + UndefinedBehaviorSanitizer (the real parsers,
# fakes only for what they call). `make fuzz` fuzzes each for FUZZ_SECONDS; new inputs it finds go to
# build/fuzz/corpus/NAME, never into the committed seeds (tests/fuzz/corpus/NAME). `make fuzz-regress` (part
# of `make test`) replays the seeds and every input that once crashed (tests/fuzz/regressions/NAME) and then
# fuzzes a fixed number of runs from a fixed seed, so it is deterministic and short enough for every CI run.
FCC         := clang
FCFLAGS     := -std=gnu11 -g -O1 -Wall -Wextra -Werror -I. -Itests/unit -Itests/fuzz -DKPROF_HOST \
               -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_NAMES  := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 60
FUZZ_RUNS   ?= 50000
-include $(wildcard tests/fuzz/fuzz_*.mk)

# fuzz_NAME_INCLUDED: kernel sources a fake #includes (to reach their statics) -- rebuilt on change, not
# compiled on their own. fuzz_NAME_LIBS: libraries (fake_target.c reports through cmocka).
define fuzz_rules
$(BUILD)/fuzz/fuzz_$(1): tests/fuzz/fuzz_$(1).c $$(fuzz_$(1)_SRCS) tests/unit/fake_hal.c $$(fuzz_$(1)_INCLUDED) $(wildcard tests/unit/*.h tests/fuzz/*.h) $(wildcard kernel/*.h kernel/*/*.h hal/*.h gdbstub/*.h arch/x86_64/*.h)
	@mkdir -p $$(dir $$@)
	$(FCC) $(FCFLAGS) $$(fuzz_$(1)_CFLAGS) -o $$@ $$(filter-out $$(fuzz_$(1)_INCLUDED),$$(filter %.c,$$^)) $$(fuzz_$(1)_LIBS)
endef
$(foreach n,$(FUZZ_NAMES),$(eval $(call fuzz_rules,$(n))))

FUZZ_BINS := $(foreach n,$(FUZZ_NAMES),$(BUILD)/fuzz/fuzz_$(n))

# Under nice: the fuzzers would otherwise take every core from whoever else uses the machine.
fuzz: $(FUZZ_BINS)
	@nice -n 10 scripts/run-fuzz.sh fuzz $(FUZZ_SECONDS) $(FUZZ_BINS)

fuzz-regress: $(FUZZ_BINS)
	@nice -n 10 scripts/run-fuzz.sh regress $(FUZZ_RUNS) $(FUZZ_BINS)

# Host tests of the Python tools (prof.py's and profexport's logic), no QEMU.
host: $(BUILD)/pprof/profile_pb2.py
	$(PY) -m pytest -q -p no:cacheprovider tests/host

integration: all $(BUILD)/pprof/profile_pb2.py
	$(PY) -m pytest -q -p no:cacheprovider --durations=12 tests/integration

# The breakpoint sweep in full (tests/integration/test_gdb_safety.py): every function of the debugger's own
# code through breakpoint, continue, stepi, read and Ctrl-C, and a larger sample of the rest; `make test`
# runs the short version. Several minutes under TCG.
gdb-sweep: all
	KPROF_GDB_SWEEP=full $(PY) -m pytest -q -p no:cacheprovider tests/integration/test_gdb_safety.py

# The soak (tests/soak/soak.py): one kernel driven for SOAK_ROUNDS rounds of profiles, netload floods, label
# changes, junk lines and datagrams and gdb attaches, then heap, tasks, stacks and lwIP compared with the
# baseline; it prints its figures. SOAK_SEED replays a run. soak-short is the few rounds `make test` runs.
# Then the stream leg (tests/soak/stream_soak.py): SOAK_STREAM_SECONDS of `profile stream` at profile.hz=1000
# on 4 busy CPUs while the shell is used, every sample accounted for and the heap back to its baseline.
SOAK_ROUNDS ?= 30
SOAK_SHORT_ROUNDS ?= 4
SOAK_STREAM_SECONDS ?= 600
SOAK_SHORT_STREAM_SECONDS ?= 45
SOAK_SEED ?=

soak: all
	SOAK_SEED=$(SOAK_SEED) $(PY) tests/soak/soak.py --rounds $(SOAK_ROUNDS)
	SOAK_SEED=$(SOAK_SEED) $(PY) tests/soak/stream_soak.py --seconds $(SOAK_STREAM_SECONDS)

soak-short: all
	SOAK_SEED=$(SOAK_SEED) $(PY) tests/soak/soak.py --rounds $(SOAK_SHORT_ROUNDS)
	SOAK_SEED=$(SOAK_SEED) $(PY) tests/soak/stream_soak.py --seconds $(SOAK_SHORT_STREAM_SECONDS)

# The builds under each stage run JOBS at a time (one per core); the tests themselves run one at a time, as
# their timings assume.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

test: deps
	@$(MAKE) --no-print-directory -j$(JOBS) unit
	@$(MAKE) --no-print-directory -j$(JOBS) fuzz-regress
	@$(MAKE) --no-print-directory -j$(JOBS) host
	@$(MAKE) --no-print-directory -j$(JOBS) integration
	@$(MAKE) --no-print-directory -j$(JOBS) soak-short

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
	@echo "make test       unit tests (plain and sanitised), fuzz regressions, host tool tests, QEMU integration tests, soak-short"
	@echo "make fuzz       fuzz every parser of outside input for FUZZ_SECONDS=$(FUZZ_SECONDS) each"
	@echo "make soak       the soak: SOAK_ROUNDS=$(SOAK_ROUNDS) rounds of everything, then leaks and lost tasks checked; then SOAK_STREAM_SECONDS=$(SOAK_STREAM_SECONDS) s of profile stream"
	@echo "make gdb-sweep  a breakpoint on every function of the debugger's own code and on a sample of the rest"
	@echo "make bench      print the benchmark figures"
	@echo "make pmu-check  the counter path end to end under KVM -cpu host (real counters only; 77 without one)"

.PHONY: all deps run debug unit fuzz fuzz-regress host integration gdb-sweep soak soak-short test bench pmu-check clean help
