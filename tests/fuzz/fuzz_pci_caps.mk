# A function's capability list through arch/x86_64/pci.c and pci_msi.c, over the fake configuration mechanism that
# stands in for arch/x86_64/x86.h's port I/O (force-included, so the target has objects of its own).
fuzz_pci_caps_CFLAGS := -include tests/unit/fake_pci_config.h
fuzz_pci_caps_SRCS := arch/x86_64/pci.c arch/x86_64/pci_msi.c tests/unit/fake_pci_config.c $(FAKE_KERNEL_SRCS)
