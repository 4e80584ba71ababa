/* kernel/net/net_report.h: the lines a network service adds to `net`. Each service (the UDP shell, the HTTP
 * server, the debugger's UDP transport, the boot secret's warning) adds its own report when it starts, so the
 * `net` command prints what runs without including any of them, and a new service is one call in its own init.
 * Reports print in their order's rank, then in the order they were added. Added from task context at start-up;
 * read by any shell task (the list only grows, each entry published whole). */
#ifndef KERNEL_NET_NET_REPORT_H
#define KERNEL_NET_NET_REPORT_H

#include <stdbool.h>

struct sink;

/* Where a service's lines stand among the others' (the order `net` has always printed them in). */
enum net_report_rank {
    NET_REPORT_SHELL = 10,    /* the UDP shell's door and budgets */
    NET_REPORT_HTTP = 20,     /* the pprof.http= server */
    NET_REPORT_SECRET = 30,   /* a keyed service under a weak boot secret */
    NET_REPORT_DEBUGGER = 40, /* the debugger's UDP transport */
};

struct net_report {
    /* Prints the service's lines. trusted: the reader is the console or a keyed UDP reader, who may see what a
     * forger would want to know (the debugger's peer address). */
    void (*print)(struct sink *out, bool trusted);
    enum net_report_rank rank;
    struct net_report *next; /* the list's own */
};

/* Adds r (static storage, print and rank set) to what `net` prints; adding one twice changes nothing. */
void net_report_add(struct net_report *r);
/* Prints every added report in rank order. */
void net_report_print(struct sink *out, bool trusted);

#endif
