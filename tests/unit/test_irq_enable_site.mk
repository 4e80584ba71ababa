test_irq_enable_site_SRCS := arch/x86_64/irq_enable_site.c
