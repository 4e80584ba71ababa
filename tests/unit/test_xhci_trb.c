/* tests/unit/test_xhci_trb.c: event TRBs as the xHCI controller writes them, judged before the driver acts on
 * them (kernel/drivers/usb/xhci_trb.c): a TRB whose cycle bit is not the consumer's is not yet written; good
 * transfer, command and port events come back with their fields; a TRB type that is no event, a slot, endpoint
 * or port out of range, a reserved completion code or a misaligned TRB pointer is refused with a reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/drivers/usb/xhci_trb.h"
#include "unit_main.h"

#define SLOTS 64
#define PORTS 8

static struct xhci_trb ev(uint32_t type, uint64_t param, uint8_t code, uint32_t residual, uint8_t slot,
                          uint8_t ep, bool cycle)
{
    return (struct xhci_trb){ .param = param, .status = (uint32_t)code << 24 | residual,
                              .control = TRB_TYPE(type) | TRB_SLOT(slot) | (uint32_t)ep << 16 | (cycle ? 1u : 0u) };
}

static enum xhci_event_kind judge(struct xhci_trb t, bool cycle, struct xhci_event *out)
{
    const char *why = 0;
    enum xhci_event_kind k = xhci_event_judge(&t, cycle, SLOTS, PORTS, out, &why);
    if (k == XHCI_EVENT_BAD)
        assert_non_null(why);
    return k;
}

static void test_cycle_bit_says_whether_it_is_written(void **state)
{
    (void)state;
    struct xhci_event e = { .slot = 99 };
    assert_int_equal(judge(ev(TRB_EV_COMMAND, 0x1000, CC_SUCCESS, 0, 1, 0, false), true, &e), XHCI_EVENT_NONE);
    assert_int_equal(e.slot, 99); /* untouched */
    assert_int_equal(judge(ev(TRB_EV_COMMAND, 0x1000, CC_SUCCESS, 0, 1, 0, true), false, &e), XHCI_EVENT_NONE);
    assert_int_equal(judge(ev(TRB_EV_COMMAND, 0x1000, CC_SUCCESS, 0, 1, 0, false), false, &e), XHCI_EVENT_COMMAND);
}

static void test_good_events_read(void **state)
{
    (void)state;
    struct xhci_event e;
    assert_int_equal(judge(ev(TRB_EV_TRANSFER, 0x2030, CC_SHORT_PACKET, 5, 3, 3, true), true, &e),
                     XHCI_EVENT_TRANSFER);
    assert_int_equal(e.trb, 0x2030);
    assert_int_equal(e.code, CC_SHORT_PACKET);
    assert_int_equal(e.residual, 5);
    assert_int_equal(e.slot, 3);
    assert_int_equal(e.endpoint, 3);
    assert_int_equal(judge(ev(TRB_EV_COMMAND, 0x4000, CC_SUCCESS, 0, SLOTS, 0, true), true, &e),
                     XHCI_EVENT_COMMAND);
    assert_int_equal(e.slot, SLOTS);
    assert_int_equal(judge(ev(TRB_EV_COMMAND, 0x4000, 5, 0, 0, 0, true), true, &e), XHCI_EVENT_COMMAND);
    assert_int_equal(judge(ev(TRB_EV_PORT, (uint64_t)PORTS << 24, CC_SUCCESS, 0, 0, 0, true), true, &e),
                     XHCI_EVENT_PORT);
    assert_int_equal(e.port, PORTS);
    assert_int_equal(judge(ev(TRB_EV_MFINDEX, 0, CC_SUCCESS, 0, 0, 0, true), true, &e), XHCI_EVENT_OTHER);
    assert_int_equal(judge(ev(TRB_EV_TRANSFER, 0x10, 200, 0, 1, 1, true), true, &e), XHCI_EVENT_TRANSFER);
}

static void test_impossible_events_refused(void **state)
{
    (void)state;
    struct xhci_event e = { .slot = 99 };
    assert_int_equal(judge(ev(TRB_NORMAL, 0x10, CC_SUCCESS, 0, 1, 1, true), true, &e), XHCI_EVENT_BAD);
    assert_int_equal(judge(ev(TRB_LINK, 0x10, CC_SUCCESS, 0, 1, 1, true), true, &e), XHCI_EVENT_BAD);
    assert_int_equal(judge(ev(40, 0x10, CC_SUCCESS, 0, 1, 1, true), true, &e), XHCI_EVENT_BAD);
    assert_int_equal(judge(ev(TRB_EV_TRANSFER, 0x10, CC_SUCCESS, 0, SLOTS + 1, 1, true), true, &e), XHCI_EVENT_BAD);
    assert_int_equal(judge(ev(TRB_EV_TRANSFER, 0x10, CC_SUCCESS, 0, 0, 1, true), true, &e), XHCI_EVENT_BAD);
    assert_int_equal(judge(ev(TRB_EV_TRANSFER, 0x10, CC_SUCCESS, 0, 1, 0, true), true, &e), XHCI_EVENT_BAD);
    assert_int_equal(judge(ev(TRB_EV_COMMAND, 0x10, CC_SUCCESS, 0, 255, 0, true), true, &e), XHCI_EVENT_BAD);
    assert_int_equal(judge(ev(TRB_EV_COMMAND, 0x10, 0, 0, 1, 0, true), true, &e), XHCI_EVENT_BAD);
    assert_int_equal(judge(ev(TRB_EV_COMMAND, 0x10, 37, 0, 1, 0, true), true, &e), XHCI_EVENT_BAD);
    assert_int_equal(judge(ev(TRB_EV_TRANSFER, 0x18, CC_SUCCESS, 0, 1, 1, true), true, &e), XHCI_EVENT_BAD);
    assert_int_equal(judge(ev(TRB_EV_PORT, 0, CC_SUCCESS, 0, 0, 0, true), true, &e), XHCI_EVENT_BAD);
    assert_int_equal(judge(ev(TRB_EV_PORT, (uint64_t)(PORTS + 1) << 24, CC_SUCCESS, 0, 0, 0, true), true, &e),
                     XHCI_EVENT_BAD);
    assert_int_equal(e.slot, 99); /* nothing handed back from any of them */
}

UNIT_MAIN(NULL, NULL,
          test_cycle_bit_says_whether_it_is_written, test_good_events_read, test_impossible_events_refused)
