/* kernel/main.c: the boot sequence, one step a line. The boot CPU arrives here from arch/x86_64/boot.S in
 * long mode on the boot stack; it ends as CPU 0's idle task. */
#include "hal/boot.h"
#include "hal/cpu.h"
#include "hal/debug.h"
#include "hal/kernel_entry.h"
#include "hal/platform.h"
#include "hal/pmu.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/drivers/usb/xhci_task.h"
#include "kernel/heap.h"
#include "kernel/httpd/httpd.h"
#include "kernel/log.h"
#include "kernel/net/net.h"
#include "kernel/profiler.h"
#include "kernel/profiler/stream_task.h"
#include "kernel/udpsh/udpsh.h"
#include "kernel/shell/shell.h"
#include "kernel/task.h"

__attribute__((noreturn)) void kmain(uintptr_t boot_info)
{
    arch_early_init(boot_info);                 /* GDT/TSS/GS for CPU 0, COM1 output, multiboot2 info, IDT */
    log_info("kprof: booting");
    uintptr_t heap_base;
    size_t heap_size;
    arch_heap_range(&heap_base, &heap_size);    /* the largest usable range of the memory map */
    heap_init((void *)heap_base, heap_size);    /* kmalloc/kfree from here on */
    log_info("mem: %llu MiB usable, heap %zu MiB at 0x%llx", (unsigned long long)(platform_ram_bytes() >> 20),
             heap_size >> 20, (unsigned long long)heap_base);
    cmdline_parse(platform_cmdline(), &console_sink); /* report unknown options now, not never */
    arch_platform_init();                       /* ACPI MADT, PIC off, LAPIC, IOAPIC, TSC + LAPIC timer calibrated */
    pmu_select(cmdline_get("pmu"));             /* the PMU backend from CPUID (pmu=auto|off|claim-intel|claim-amd) */
    profiler_set_tick_rate(cmdline_get("profile.hz")); /* the tick's rate, before any CPU starts its tick */
    profile_stream_set_slow(cmdline_get("profile.stream_slow_ms")); /* a test knob: a slowed stream sender */
    profiler_set_ring_records(cmdline_get("profile.ring_records")); /* a test knob: smaller rings */
    console_set_stall(cmdline_get("console.stall_ms"), &console_sink); /* a test knob: a shorter wait */
    arch_start_cpus();                          /* INIT-SIPI-SIPI each AP into its idle loop */
    log_info("smp: %u cpus online", cpu_count());
    task_start_reaper();                        /* frees the stacks of tasks that exited */
    arch_console_init();                        /* VGA mirror, COM1 and keyboard input interrupts */
    xhci_init();                                /* a USB keyboard on xHCI, enumerated by its own task */
    gdb_init();                                 /* the gdb stub on COM2; gdb=wait stops here for gdb */
    net_init();                                 /* the NIC by PCI id, lwIP in the network task, DHCP or ip= */
    udpsh_init();                               /* the UDP shell on port 5555 (udpsh.port=) */
    httpd_init();                               /* /debug/pprof/ over HTTP when pprof.http=PORT */
    console_start_shell();                      /* prints ready: and the first prompt */
    arch_start_tick();                          /* CPU 0's tick: scheduling begins */
    sched_idle_loop();                          /* this context is CPU 0's idle task */
}
