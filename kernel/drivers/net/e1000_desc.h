/* kernel/drivers/net/e1000_desc.h: the legacy receive and transmit descriptors of the Intel 8254x/8257x family
 * and the judgment of what the card wrote back into them -- pure functions with no hardware behind them, so
 * the host can feed them garbage (tests/unit/test_nic_desc.c, tests/fuzz/fuzz_nic_desc.c). Both the 82540EM
 * (e1000) and the 82574L (e1000e) take these formats while RCTL.DTYP and RFCTL.EXTEN are left 0 and the
 * transmit descriptors' DEXT bit is clear (kernel/drivers/net/e1000.c). */
#ifndef KERNEL_DRIVERS_NET_E1000_DESC_H
#define KERNEL_DRIVERS_NET_E1000_DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct e1000_rx_desc {
    uint64_t addr;
    uint16_t length;   /* bytes the card wrote (frame check sequence stripped: RCTL.SECRC) */
    uint16_t checksum;
    uint8_t status;
    uint8_t errors;
    uint16_t special;
};

struct e1000_tx_desc {
    uint64_t addr;
    uint16_t length;
    uint8_t cso;
    uint8_t cmd;
    uint8_t status;
    uint8_t css;
    uint16_t special;
};

_Static_assert(sizeof(struct e1000_rx_desc) == 16 && sizeof(struct e1000_tx_desc) == 16, "descriptors are 16 bytes");

#define E1000_RXD_STAT_DD 0x01  /* descriptor done: the card wrote it back */
#define E1000_RXD_STAT_EOP 0x02 /* end of packet */
/* Error bits that mean the frame is damaged: CRC, symbol, sequence, carrier extension, RX data errors. (The
 * TCP/UDP and IP checksum bits, 0x20 and 0x40, are left out: RXCSUM offload is not enabled.) */
#define E1000_RXD_ERR_FRAME 0x97

#define E1000_TXD_CMD_EOP 0x01
#define E1000_TXD_CMD_IFCS 0x02 /* insert the frame check sequence */
#define E1000_TXD_CMD_RS 0x08   /* report status: set DD when done */
#define E1000_TXD_STAT_DD 0x01

enum e1000_rx_verdict {
    E1000_RX_NOT_DONE, /* still the card's: stop here */
    E1000_RX_FRAME,    /* *frame_len bytes of a whole frame */
    E1000_RX_BAD,      /* written back but not a frame we can use (damaged, split over buffers, impossible
                        * length): dropped, counted, the buffer goes back */
};

/* A receive descriptor read back from the ring, for buffers of buffer_size bytes. Reads it once: the card may
 * be rewriting a descriptor the driver does not own, so each field is taken from the copy. */
enum e1000_rx_verdict e1000_rx_judge(const volatile struct e1000_rx_desc *d, size_t buffer_size, size_t *frame_len);
/* A transmit descriptor the driver handed over: whether the card has finished it. */
bool e1000_tx_done(const volatile struct e1000_tx_desc *d);

#endif
