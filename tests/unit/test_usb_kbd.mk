test_usb_kbd_SRCS := kernel/drivers/usb_kbd.c
