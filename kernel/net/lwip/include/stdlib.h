/* kernel/net/lwip/include/stdlib.h: lwIP includes <stdlib.h> for atoi() alone (netif_find() reads the number in a
 * name like "en0"); without a C library this is it. This directory is on the include path of lwIP and
 * kernel/net only. */
#ifndef KPROF_LWIP_SHIM_STDLIB_H
#define KPROF_LWIP_SHIM_STDLIB_H

/* C's atoi: leading white space, an optional sign, then decimal digits up to the first other character.
 * Accumulates unsigned, so an overlong number wraps instead of overflowing. */
static inline int atoi(const char *s)
{
    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    int negative = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    unsigned value = 0;
    while (*s >= '0' && *s <= '9')
        value = value * 10u + (unsigned)(*s++ - '0');
    return (int)(negative ? 0u - value : value);
}

#endif
