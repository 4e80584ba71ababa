# arch/x86_64/pci.c's capability lookup and MSI/MSI-X programming over the fake configuration mechanism, which
# stands in for the port I/O of arch/x86_64/x86.h (force-included, so the program has objects of its own).
test_pci_config_CFLAGS := -include tests/unit/fake_pci_config.h
test_pci_config_SRCS := arch/x86_64/pci.c arch/x86_64/pci_msi.c tests/unit/fake_pci_config.c $(FAKE_KERNEL_SRCS)
