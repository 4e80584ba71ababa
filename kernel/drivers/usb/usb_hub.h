/* kernel/drivers/usb/usb_hub.h: the USB 2.0 hub driver's calls, made by the host controller's driver at the
 * points of a hub's life it alone sees (enumeration, its status-change endpoint's transfers, the task's wake).
 * The hub driver works on the USB core's view of a device and reaches the controller through its operations
 * (kernel/drivers/usb/usb_host.h). */
#ifndef KERNEL_DRIVERS_USB_USB_HUB_H
#define KERNEL_DRIVERS_USB_USB_HUB_H

#include <stdbool.h>

#include "kernel/drivers/usb/usb_host.h"

/* After the device descriptor named a hub: its hub descriptor read and judged (hub->hub_ports, hub_think,
 * hub_power_ms). */
bool usb_hub_describe(struct usb_host *host, struct usb_device *hub, const char **why);
/* After SET_CONFIGURATION: ports powered, the status-change transfer (report_len bytes) queued, every port to
 * be looked at. */
bool usb_hub_start(struct usb_host *host, struct usb_device *hub, unsigned report_len, const char **why);
/* A transfer on a hub's status-change endpoint ended (outside any wait): the ports it names are noted, and the
 * next transfer queued; or the endpoint stopped. */
void usb_hub_report(struct usb_host *host, struct usb_device *hub, const struct usb_report *r);
/* From the task: every hub port noted as changed is looked at -- a device gone is detached, one come is reset
 * and enumerated. Bounded: a few passes, the rest at the next wake. */
void usb_hubs_look(struct usb_host *host);

#endif
