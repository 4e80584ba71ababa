/* kernel/drivers/usb/xhci_trb.h: the xHCI transfer request block (TRB) -- the 16-byte unit of every ring -- its
 * types and fields, and the judgment of an event TRB the controller wrote into the event ring. The judgment is
 * a pure function (tests/unit/test_xhci_trb.c, tests/fuzz/fuzz_usb_desc.c): the driver (kernel/drivers/usb/xhci.c)
 * acts on nothing an event says until it has passed. Field layouts: xHCI 1.2 section 6.4. */
#ifndef KERNEL_DRIVERS_USB_XHCI_TRB_H
#define KERNEL_DRIVERS_USB_XHCI_TRB_H

#include <stdbool.h>
#include <stdint.h>

struct xhci_trb {
    uint64_t param;
    uint32_t status;
    uint32_t control;
};
_Static_assert(sizeof(struct xhci_trb) == 16, "a TRB is 16 bytes");

#define TRB_CYCLE (1u << 0)
#define TRB_TOGGLE (1u << 1) /* link TRB: toggle the cycle state */
#define TRB_ISP (1u << 2)    /* interrupt on short packet */
#define TRB_IOC (1u << 5)    /* interrupt on completion */
#define TRB_IDT (1u << 6)    /* immediate data (setup stage) */
#define TRB_DIR_IN (1u << 16)
#define TRB_TYPE(t) ((uint32_t)(t) << 10)
#define TRB_TYPE_OF(control) (((control) >> 10) & 0x3F)
#define TRB_SLOT(s) ((uint32_t)(s) << 24)

enum {
    TRB_NORMAL = 1, TRB_SETUP = 2, TRB_DATA = 3, TRB_STATUS = 4, TRB_LINK = 6,
    TRB_ENABLE_SLOT = 9, TRB_DISABLE_SLOT = 10, TRB_ADDRESS_DEVICE = 11, TRB_CONFIGURE_ENDPOINT = 12,
    TRB_EVALUATE_CONTEXT = 13, TRB_NOOP_COMMAND = 23,
    TRB_EV_TRANSFER = 32, TRB_EV_COMMAND = 33, TRB_EV_PORT = 34, TRB_EV_BANDWIDTH = 35, TRB_EV_DOORBELL = 36,
    TRB_EV_HOST = 37, TRB_EV_NOTIFICATION = 38, TRB_EV_MFINDEX = 39,
};

#define CC_SUCCESS 1
#define CC_SHORT_PACKET 13
#define CC_MAX_DEFINED 36 /* codes 37..191 are reserved; 192..255 vendor-defined */

enum xhci_event_kind {
    XHCI_EVENT_NONE,     /* the cycle bit says the controller has not written this TRB yet */
    XHCI_EVENT_TRANSFER, /* slot, endpoint, code, residual, trb */
    XHCI_EVENT_COMMAND,  /* slot (0 when the command has none), code, trb */
    XHCI_EVENT_PORT,     /* port */
    XHCI_EVENT_OTHER,    /* a well-formed event this driver has no use for (MFINDEX wrap, host controller ...) */
    XHCI_EVENT_BAD,      /* written, but not an event that can be: *why says how; consumed and ignored */
};

struct xhci_event {
    uint64_t trb;       /* the command or transfer TRB it completes (16-byte aligned) */
    uint32_t residual;  /* transfer: bytes not transferred */
    uint8_t code;       /* completion code */
    uint8_t slot;
    uint8_t endpoint;   /* device context index 1..31 */
    uint8_t port;       /* 1..max_ports */
    uint8_t type;
};

/* The event TRB at the event ring's dequeue position, read once, for a consumer cycle state cycle and a
 * controller with max_slots slots and max_ports root ports. */
enum xhci_event_kind xhci_event_judge(const volatile struct xhci_trb *t, bool cycle, unsigned max_slots,
                                      unsigned max_ports, struct xhci_event *out, const char **why);

#endif
