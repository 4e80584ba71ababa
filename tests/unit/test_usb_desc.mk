test_usb_desc_SRCS := kernel/drivers/usb/usb_desc.c
