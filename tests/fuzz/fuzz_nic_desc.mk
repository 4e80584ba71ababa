fuzz_nic_desc_SRCS := kernel/drivers/net/virtio_net_desc.c kernel/drivers/net/e1000_desc.c
