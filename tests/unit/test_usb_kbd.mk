test_usb_kbd_SRCS := kernel/drivers/usb/usb_kbd.c
