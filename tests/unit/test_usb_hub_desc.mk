test_usb_hub_desc_SRCS := kernel/drivers/usb/usb_hub_desc.c
