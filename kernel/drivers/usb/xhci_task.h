/* kernel/drivers/usb/xhci_task.h: the USB keyboard's start at boot (kernel/drivers/usb/xhci_task.c). */
#ifndef KERNEL_DRIVERS_USB_XHCI_TASK_H
#define KERNEL_DRIVERS_USB_XHCI_TASK_H

/* From kmain: finds the controller by class and starts the xHCI task on CPU 0; one log line when there is none. */
void xhci_init(void);

#endif
