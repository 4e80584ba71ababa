/* kernel/drivers/usb/xhci_trb.c: judging an event TRB the xHCI controller wrote (see the header). The TRB is read
 * once into a copy -- the control word first, since its cycle bit is what says the rest is written -- and
 * every field the driver will use is range-checked before it is handed back. */
#include "kernel/drivers/usb/xhci_trb.h"

enum xhci_event_kind xhci_event_judge(const volatile struct xhci_trb *t, bool cycle, unsigned max_slots,
                                      unsigned max_ports, struct xhci_event *out, const char **why)
{
    uint32_t control = t->control;
    if (((control & TRB_CYCLE) != 0) != cycle)
        return XHCI_EVENT_NONE;
    __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the rest of the TRB is valid once its cycle bit is seen */
    uint64_t param = t->param;
    uint32_t status = t->status;
    struct xhci_event ev = {
        .trb = param, .residual = status & 0xFFFFFF, .code = (uint8_t)(status >> 24),
        .slot = (uint8_t)(control >> 24), .endpoint = (control >> 16) & 0x1F, .type = TRB_TYPE_OF(control),
    };
    switch (ev.type) {
    case TRB_EV_TRANSFER:
    case TRB_EV_COMMAND:
        if (ev.code == 0 || (ev.code > CC_MAX_DEFINED && ev.code < 192)) {
            *why = "an event carries a reserved completion code";
            return XHCI_EVENT_BAD;
        }
        if (ev.slot > max_slots || (ev.type == TRB_EV_TRANSFER && ev.slot == 0)) {
            *why = "an event names a slot the controller does not have";
            return XHCI_EVENT_BAD;
        }
        if (ev.type == TRB_EV_TRANSFER && ev.endpoint == 0) {
            *why = "a transfer event names endpoint context 0";
            return XHCI_EVENT_BAD;
        }
        if (ev.trb & 0xF) {
            *why = "an event's TRB pointer is not 16-byte aligned";
            return XHCI_EVENT_BAD;
        }
        *out = ev;
        return ev.type == TRB_EV_TRANSFER ? XHCI_EVENT_TRANSFER : XHCI_EVENT_COMMAND;
    case TRB_EV_PORT:
        ev.port = (uint8_t)(param >> 24);
        if (ev.port == 0 || ev.port > max_ports) {
            *why = "a port status change event names a port the controller does not have";
            return XHCI_EVENT_BAD;
        }
        *out = ev;
        return XHCI_EVENT_PORT;
    case TRB_EV_BANDWIDTH:
    case TRB_EV_DOORBELL:
    case TRB_EV_HOST:
    case TRB_EV_NOTIFICATION:
    case TRB_EV_MFINDEX:
        *out = ev;
        return XHCI_EVENT_OTHER;
    default:
        *why = "the event ring holds a TRB whose type is not an event";
        return XHCI_EVENT_BAD;
    }
}
