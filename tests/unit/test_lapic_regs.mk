# The header under test is all there is: the unit rule's prerequisites name kernel/ and hal/ headers, not arch/.
test_lapic_regs_SRCS :=
$(BUILD)/unit/plain/test_lapic_regs $(BUILD)/unit/san/test_lapic_regs: arch/x86_64/lapic_regs.h
