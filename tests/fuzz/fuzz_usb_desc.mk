fuzz_usb_desc_SRCS := kernel/drivers/usb/usb_desc.c kernel/drivers/usb/usb_hub_desc.c kernel/drivers/usb/xhci_trb.c \
                      kernel/drivers/usb/usb_kbd.c
