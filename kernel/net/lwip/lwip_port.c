/* kernel/net/lwip/lwip_port.c: lwIP's start, and the check that keeps it in one task. lwIP runs with NO_SYS and
 * SYS_LIGHTWEIGHT_PROT 0 (lwipopts.h): it takes no lock anywhere, which is correct only while a single task
 * calls it. lwIP announces each entry into its core with LWIP_ASSERT_CORE_LOCKED(), and here that asks
 * whether the caller is the task that started it. */
#include "kernel/net/lwip/lwip_port.h"

#include "kernel/log.h"
#include "kernel/panic.h"
#include "kernel/task.h"
#include "lwip/init.h"

static struct task *owner;

void net_stack_init(void)
{
    if (owner)
        panic("net_stack_init: lwIP already started by task %s", owner->name);
    owner = task_current(); /* first: lwip_init itself sets timers, which runs the check below */
    lwip_init();
    log_info("net: lwIP %s", LWIP_VERSION_STRING);
}

void lwip_port_assert_core_locked(void)
{
    struct task *self = task_current();
    if (self != owner)
        panic("lwip_port_assert_core_locked: lwIP called from task %s, but it belongs to %s", self->name,
              owner ? owner->name : "nobody (net_stack_init has not run)");
}
