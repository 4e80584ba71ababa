fuzz_usb_desc_SRCS := kernel/drivers/usb_desc.c kernel/drivers/usb_hub_desc.c kernel/drivers/xhci_trb.c \
                      kernel/drivers/usb_kbd.c
