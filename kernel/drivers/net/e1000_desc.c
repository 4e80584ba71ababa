/* kernel/drivers/net/e1000_desc.c: judging what an e1000-family card wrote back into its descriptor rings (see the
 * header). Everything the card wrote is checked before it is used: done, whole, undamaged, a length that is
 * an Ethernet frame and fits the buffer. */
#include "kernel/drivers/net/e1000_desc.h"

#include "kernel/net/netdev.h"

enum e1000_rx_verdict e1000_rx_judge(const volatile struct e1000_rx_desc *d, size_t buffer_size, size_t *frame_len)
{
    uint8_t status = d->status;
    if (!(status & E1000_RXD_STAT_DD))
        return E1000_RX_NOT_DONE;
    /* the status read comes first: the rest of the write-back is only valid once DD is seen */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    uint16_t length = d->length;
    uint8_t errors = d->errors;
    /* A frame that did not end in this buffer was split: with 2048-byte buffers and long frames off that
     * cannot be a frame we asked for, so it is dropped whole (each of its pieces counted). */
    if (!(status & E1000_RXD_STAT_EOP) || (errors & E1000_RXD_ERR_FRAME))
        return E1000_RX_BAD;
    if (length < NETDEV_FRAME_MIN || length > buffer_size || length > NETDEV_FRAME_MAX)
        return E1000_RX_BAD;
    *frame_len = length;
    return E1000_RX_FRAME;
}

bool e1000_tx_done(const volatile struct e1000_tx_desc *d) { return d->status & E1000_TXD_STAT_DD; }
