/* kernel/drivers/net/virtio_net_desc.c: judging what a virtio-net card wrote into its used rings (see the header):
 * every id and length is the device's word, checked against what the driver posted before it is used. */
#include "kernel/drivers/net/virtio_net_desc.h"

#include "kernel/net/netdev.h"

enum virtio_rx_verdict virtio_net_rx_judge(uint32_t id, uint32_t len, unsigned slots, size_t hdr_len,
                                           size_t slot_size, unsigned *slot, size_t *frame_len)
{
    if ((id & 1) || id / 2 >= slots)
        return VIRTIO_RX_BAD_ID;
    *slot = id / 2;
    /* len counts the header too; what follows it must be an Ethernet frame that fits the slot */
    if (len < hdr_len + NETDEV_FRAME_MIN || len > slot_size)
        return VIRTIO_RX_BAD_LEN;
    *frame_len = len - hdr_len;
    return VIRTIO_RX_FRAME;
}

bool virtio_net_tx_judge(uint32_t id, unsigned slots, const bool *in_flight, unsigned *slot)
{
    if ((id & 1) || id / 2 >= slots || !in_flight[id / 2])
        return false;
    *slot = id / 2;
    return true;
}
