# kprof build: the kernel ELF (linked in passes until its baked symbol table stops moving), the ISO, QEMU
# targets for people (run, debug) and the test and benchmark suites. `make help` lists the targets.

BUILD   := build
SMP     ?= 4
MEM     ?= 256
CMDLINE ?=
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
KSRCS   := $(sort $(wildcard arch/x86_64/*.c arch/x86_64/*.S kernel/*.c kernel/drivers/*.c gdbstub/*.c))
KOBJS   := $(patsubst %,$(BUILD)/k/%.o,$(KSRCS))

all: $(BUILD)/kprof.elf $(BUILD)/kprof.iso

$(BUILD)/k/%.c.o: %.c $(BUILD)/kflags
	@mkdir -p $(dir $@)
	$(KCC) $(KCFLAGS) -c $< -o $@

$(BUILD)/k/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(KAS) $(KASFLAGS) -c $< -o $@

# The symbol table is generated from `nm` of the previous pass and linked in; scripts/link.sh repeats until
# the text addresses of two passes agree, so the table inside the final image describes that image.
$(BUILD)/kprof.elf: $(KOBJS) arch/x86_64/linker.ld scripts/link.sh scripts/gensyms.py
	KCC="$(KCC)" KCFLAGS="$(KCFLAGS)" scripts/link.sh $(BUILD) $(KOBJS)

$(BUILD)/kprof.iso: $(BUILD)/kprof.elf grub.cfg scripts/mkiso.sh
	scripts/mkiso.sh $< $@

-include $(KOBJS:.o=.d)

# Objects depend on the flags they were built with: a changed flag rebuilds everything.
$(BUILD)/kflags: FORCE
	@mkdir -p $(BUILD)
	@echo '$(KCC) $(KCFLAGS)' | cmp -s - $@ || echo '$(KCC) $(KCFLAGS)' > $@
FORCE:

# ---- running ------------------------------------------------------------------------------------------------
deps:
	@scripts/deps.sh

run: deps
	@$(MAKE) --no-print-directory all
	@scripts/qemu.sh --smp $(SMP) --mem $(MEM) --cmdline "$(CMDLINE)"

# ---- tests --------------------------------------------------------------------------------------------------
# Host unit tests: tests/unit/test_NAME.c plus the portable sources its test_NAME.mk names in test_NAME_SRCS,
# built twice: plain, and under AddressSanitizer + UndefinedBehaviorSanitizer.
HCC        := gcc
HCFLAGS    := -std=gnu11 -g -O1 -Wall -Wextra -Werror -I. -Itests/unit -DKPROF_HOST -fno-omit-frame-pointer
SANFLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=all
UNIT_NAMES := $(patsubst tests/unit/test_%.c,%,$(wildcard tests/unit/test_*.c))
-include $(wildcard tests/unit/test_*.mk)

define unit_rules
$(BUILD)/unit/plain/test_$(1): tests/unit/test_$(1).c $$(test_$(1)_SRCS) tests/unit/fake_hal.c $(wildcard tests/unit/*.h) $(wildcard kernel/*.h hal/*.h)
	@mkdir -p $$(dir $$@)
	$(HCC) $(HCFLAGS) $$(test_$(1)_CFLAGS) -o $$@ $$(filter %.c,$$^) -lcmocka -lpthread
$(BUILD)/unit/san/test_$(1): tests/unit/test_$(1).c $$(test_$(1)_SRCS) tests/unit/fake_hal.c $(wildcard tests/unit/*.h) $(wildcard kernel/*.h hal/*.h)
	@mkdir -p $$(dir $$@)
	$(HCC) $(HCFLAGS) $(SANFLAGS) $$(test_$(1)_CFLAGS) -o $$@ $$(filter %.c,$$^) -lcmocka -lpthread
endef
$(foreach n,$(UNIT_NAMES),$(eval $(call unit_rules,$(n))))

UNIT_BINS := $(foreach n,$(UNIT_NAMES),$(BUILD)/unit/plain/test_$(n) $(BUILD)/unit/san/test_$(n))

unit: $(UNIT_BINS)
	@scripts/run-unit.sh $(UNIT_BINS)

integration: all
	$(PY) -m pytest -q -p no:cacheprovider tests/integration

test: deps
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory integration

bench: deps
	@$(MAKE) --no-print-directory all
	$(PY) tests/bench/run.py

clean:
	rm -rf $(BUILD)

help:
	@echo "make            build build/kprof.elf and build/kprof.iso"
	@echo "make run        boot in QEMU (SMP=$(SMP) MEM=$(MEM) CMDLINE=...), console on this terminal"
	@echo "make test       host unit tests (plain and sanitised) and QEMU integration tests"
	@echo "make bench      print the benchmark figures"

.PHONY: all deps run unit integration test bench clean help
