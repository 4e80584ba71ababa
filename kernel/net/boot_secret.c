/* kernel/net/boot_secret.c: a keyed service's set-up at boot (kernel/net/boot_secret.h) -- udpsh.key= read (and
 * refused when it does not parse or the command line naming it was cut), the kernel's one entropy pool gathered
 * from hal/entropy.h (kernel/net/entropy_pool.h), the service's secret drawn from the pool and the key, and what
 * is said of a weak pool or a refused generator. */
#include "kernel/net/boot_secret.h"

#include <stdatomic.h>

#include "hal/cpu.h"
#include "hal/entropy.h"
#include "kernel/cmdline.h"
#include "kernel/lib/format.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"
#include "kernel/log.h"
#include "kernel/net/entropy_pool.h"
#include "kernel/net/net_report.h"

static const struct entropy_source machine = { entropy_hardware_present, entropy_hardware_read,
                                               entropy_timing_read };
static struct entropy_pool pool;
static atomic_int pool_state; /* 0 not gathered, 1 being gathered, 2 gathered */
static atomic_bool keyed;     /* some service took a key from udpsh.key= */

/* Gathered by the first caller (kmain's net_init or udpsh_init, task context); a later caller on another CPU
 * waits for it rather than read a half-made seed. */
static struct entropy_pool *boot_pool(void)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&pool_state, &expected, 1)) {
        entropy_pool_gather(&pool, &machine);
        if (!pool.hardware)
            log_warn("entropy: %s; the boot secret comes from timing, about %u bits: weak",
                     entropy_pool_hardware_why(&pool), pool.estimate_bits);
        else if (entropy_pool_weak(&pool))
            log_warn("entropy: the boot secret has about %u bits: weak", pool.estimate_bits);
        else
            log_info("entropy: the boot secret comes from RDSEED/RDRAND and timing, about %u bits",
                     pool.estimate_bits);
        atomic_store(&pool_state, 2);
    }
    while (atomic_load(&pool_state) != 2)
        cpu_relax();
    return &pool;
}

void boot_secret_derive(const char *domain, const uint8_t *key, size_t key_len, uint8_t secret[SHA256_DIGEST_SIZE])
{
    entropy_pool_derive(boot_pool(), cycles(), domain, key, key_len, secret);
}

static void secret_note_for_net(struct sink *out, bool trusted)
{
    (void)trusted;
    boot_secret_note(out);
}

bool keyed_key_from_cmdline(uint8_t key[KEYED_KEY_MAX_BYTES], size_t *key_len, char *error, size_t error_cap)
{
    *key_len = 0;
    if (cmdline_cut_names("udpsh.key")) {
        /* Even when a udpsh.key= was taken: the line is not the one written, and a second key past the cut, or
         * the intended one, cannot be told from it. */
        ksnprintf(error, error_cap, "named on a command line over %d characters or %d words, not taken whole",
                  CMDLINE_MAX - 1, CMDLINE_MAX_OPTIONS);
        return false;
    }
    const char *key_opt = cmdline_get("udpsh.key");
    if (key_opt && !keyed_key_parse(key_opt, key, key_len, error, error_cap)) {
        *key_len = 0;
        return false;
    }
    return true;
}

void keyed_boot_draw(const char *domain, struct keyed_boot *b)
{
    memset(b, 0, sizeof *b);
    b->key_refused = !keyed_key_from_cmdline(b->key, &b->key_len, b->key_error, sizeof b->key_error);
    boot_secret_derive(domain, b->key, b->key_len, b->secret);
    if (b->key_len) {
        atomic_store(&keyed, true);
        static struct net_report lines = { secret_note_for_net, NET_REPORT_SECRET, NULL };
        net_report_add(&lines); /* `net` warns of a weak secret only where a key depends on it */
    }
}

uint32_t boot_secret_run_id(void)
{
    return entropy_pool_run_id(boot_pool());
}

void boot_secret_note(struct sink *out)
{
    if (!atomic_load(&keyed) || atomic_load(&pool_state) != 2 || !entropy_pool_weak(&pool))
        return;
    sink_printf(out, "secret: keyed, but the boot secret is weak (%s; about %u bits from timing)\n",
                entropy_pool_hardware_why(&pool), pool.estimate_bits);
}
