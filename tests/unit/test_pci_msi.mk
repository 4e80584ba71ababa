# The capability walk and the MSI capability's layout and message: arch/x86_64/pci_msi.c, over fake config spaces.
test_pci_msi_SRCS := arch/x86_64/pci_msi.c
