fuzz_nic_desc_SRCS := kernel/drivers/virtio_net_desc.c kernel/drivers/e1000_desc.c
