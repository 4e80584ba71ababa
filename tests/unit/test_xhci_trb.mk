test_xhci_trb_SRCS := kernel/drivers/usb/xhci_trb.c
