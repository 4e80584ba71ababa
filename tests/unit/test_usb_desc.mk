test_usb_desc_SRCS := kernel/drivers/usb_desc.c
