/* kernel/drivers/usb/xhci_task.c: the xHCI driver's one task, on CPU 0 (docs/usb.md). It brings the controller
 * up (kernel/drivers/usb/xhci.c) and then, at each wake, takes the events the controller wrote (transfers go to
 * the devices, kernel/drivers/usb/xhci_dev.c), looks at every root port noted as changed, then at every hub port
 * (kernel/drivers/usb/usb_hub.c), and types the key repeats that fell due. It sleeps until the event ring's
 * interrupt, the next repeat, or SAFETY_MS as a net for an edge missed -- or polls, when the controller has no
 * interrupt to give. This file is the top of the driver: it calls the layers below and none calls it. */
#include "kernel/drivers/usb/xhci_task.h"

#include "hal/cpu.h"
#include "kernel/drivers/usb/usb_hub.h"
#include "kernel/drivers/usb/xhci.h"
#include "kernel/drivers/usb/xhci_dev.h"
#include "kernel/log.h"
#include "kernel/task.h"

#define SAFETY_MS 1000

static struct xhci_bus bus;

static void xhci_task(void *arg)
{
    struct xhci *hc = arg;
    xhci_bus_init(&bus, hc);
    if (!xhci_start(hc, xhci_dev_transfer, &bus))
        task_exit();
    unsigned ports = xhci_root_ports(hc);
    for (;;) {
        xhci_events(hc);
        for (unsigned n; (n = xhci_port_change_take(hc));) /* ports noted meanwhile are taken in this loop too */
            if (n <= ports)
                xhci_root_port_look(&bus, n);
        usb_hubs_look(&bus.host);
        int64_t now = time_ns();
        xhci_sleep(hc, xhci_keyboards_tick(&bus, now, now + (int64_t)SAFETY_MS * 1000000));
    }
}

void xhci_init(void)
{
    struct xhci *hc = xhci_find();
    if (hc && !task_spawn("xhci", xhci_task, hc, 0))
        log_warn("usb: xHCI %04x:%04x: no memory for its task -- no USB keyboard", xhci_pci(hc)->vendor,
                 xhci_pci(hc)->device);
}
