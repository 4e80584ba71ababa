/* arch/x86_64/smp.c: starting the application processors the MADT listed, one at a time, with the
 * INIT-SIPI-SIPI sequence through a real-mode trampoline copied to 0x8000 (APIC ids above 254 only in x2APIC
 * mode, whose destinations are 32 bits); each AP's memory (its first stack, its interrupt stacks) allocated only
 * when it is started; and each AP's way from the trampoline into the scheduler (its own GDT/TSS/GS, the shared
 * IDT, its LAPIC in the boot CPU's mode and its tick, an idle task). */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/lapic_regs.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/smp_left.h"
#include "arch/x86_64/x86.h"
#include "kernel/heap.h"
#include "kernel/log.h"
#include "kernel/lib/string.h"
#include "kernel/task.h" /* TASK_STACK_SIZE, STACK_PAINT: an AP's first stack is its idle task's */

#define AP_TRAMPOLINE_ADDR 0x8000
#define AP_STACK_SIZE TASK_STACK_SIZE

extern const uint8_t ap_trampoline_start[], ap_trampoline_end[];
extern const uint32_t ap_tramp_cr3_off, ap_tramp_stack_off, ap_tramp_entry_off, ap_tramp_cpu_off;

static atomic_bool ap_arrived;
static uint8_t *ap_stacks[MAX_CPUS];

__attribute__((noreturn)) static void ap_main(uint64_t index)
{
    /* The APIC id the boot CPU woke it by: lapic_id() would fault before lapic_init turns x2APIC on here. */
    percpu_install((unsigned)index, percpu_area[index].apic_id);
    idt_load();
    lapic_init();
    sched_init_cpu(ap_stacks[index], ap_stacks[index] + AP_STACK_SIZE);
    percpu_mark_online((unsigned)index);
    atomic_store(&ap_arrived, true);
    time_start_tick();
    sched_idle_loop();
}

static void tramp_set(uint32_t off, uint64_t value)
{
    *(volatile uint64_t *)(uintptr_t)(AP_TRAMPOLINE_ADDR + off) = value;
}

static bool wait_arrival(uint64_t us)
{
    for (uint64_t waited = 0; waited < us; waited += 10) {
        if (atomic_load(&ap_arrived))
            return true;
        delay_us(10);
    }
    return atomic_load(&ap_arrived);
}

/* The boot log's account of the CPUs the firmware listed (smp_left.c words it). */
static void report_left(unsigned listed, unsigned started, unsigned failed, unsigned considered)
{
    char info[160], warn[224];
    smp_left_lines(acpi.cpu_apic_ids, listed, started, failed, considered, info, sizeof info, warn, sizeof warn);
    log_info("%s", info);
    if (warn[0])
        log_warn("%s", warn);
}

void smp_start_aps(void)
{
    /* The trampoline overwrites a page below 1 MiB. A BIOS leaves 0x8000 free; UEFI firmware may keep its own
     * data there, so the memory map must call the page usable RAM (GRUB reports UEFI's boot-services memory,
     * which is free once it has exited them, as available). If it is not, running on the boot CPU alone is
     * better than corrupting the firmware's memory. */
    size_t tramp_size = (size_t)(ap_trampoline_end - ap_trampoline_start);
    if (!boot_ram_usable(AP_TRAMPOLINE_ADDR, tramp_size)) {
        log_warn("smp: 0x%x..0x%zx is not usable RAM in the memory map: not starting the other cpus",
                 AP_TRAMPOLINE_ADDR, AP_TRAMPOLINE_ADDR + tramp_size);
        percpu_set_count(1);
        return;
    }
    memcpy((void *)AP_TRAMPOLINE_ADDR, ap_trampoline_start, tramp_size);
    uint32_t self = lapic_id();
    unsigned next_index = 1;

    unsigned listed = acpi.cpu_count < ACPI_MAX_CPUS ? acpi.cpu_count : ACPI_MAX_CPUS;
    percpu_set_count(listed > MAX_CPUS ? MAX_CPUS : listed);
    unsigned failed = 0, considered = 0;
    for (unsigned i = 0; i < listed && next_index < MAX_CPUS; i++, considered = i) {
        uint32_t apic_id = acpi.cpu_apic_ids[i];
        if (apic_id == self)
            continue;
        if (apic_id > XAPIC_MAX_ID && !lapic_x2apic_mode()) {
            /* xAPIC mode reaches APIC ids 0..254 (255 is the broadcast): one above needs x2APIC. */
            log_warn("smp: cpu with APIC id %u needs x2APIC, and the APIC runs in %s: left in its reset state",
                     apic_id, lapic_mode_text());
            failed++;
            continue;
        }
        /* The AP's first stack becomes its idle task's stack, painted so `stacks` can measure it. */
        uint8_t *stack = kmalloc_aligned(AP_STACK_SIZE, 16);
        uint8_t (*ist)[IST_STACK_SIZE] = kmalloc_aligned(IST_STACKS * IST_STACK_SIZE, 16);
        if (!stack || !ist) {
            log_warn("smp: no memory for the stacks of cpu with APIC id %u", apic_id);
            kfree(stack);
            kfree(ist);
            break;
        }
        for (size_t w = 0; w < AP_STACK_SIZE / 4; w++)
            ((uint32_t *)stack)[w] = STACK_PAINT;
        percpu_area[next_index].apic_id = apic_id;
        percpu_area[next_index].ist_stacks = ist;
        ap_stacks[next_index] = stack;
        tramp_set(ap_tramp_cr3_off, read_cr3());
        tramp_set(ap_tramp_stack_off, (uint64_t)(stack + AP_STACK_SIZE));
        tramp_set(ap_tramp_entry_off, (uint64_t)ap_main);
        tramp_set(ap_tramp_cpu_off, next_index);
        atomic_store(&ap_arrived, false);

        lapic_send_init(apic_id);
        delay_us(10000);
        lapic_send_startup(apic_id, AP_TRAMPOLINE_ADDR >> 12);
        if (!wait_arrival(1000)) {
            lapic_send_startup(apic_id, AP_TRAMPOLINE_ADDR >> 12);
            if (!wait_arrival(1000000)) {
                log_warn("smp: cpu with APIC id %u did not start", apic_id);
                percpu_area[next_index].ist_stacks = 0;
                kfree(stack);
                kfree(ist);
                failed++;
                continue;
            }
        }
        next_index++;
        considered = i + 1;
    }
    percpu_set_count(next_index);
    report_left(acpi.cpu_count, next_index, failed, considered);
}
