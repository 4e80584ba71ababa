test_xhci_trb_SRCS := kernel/drivers/xhci_trb.c
