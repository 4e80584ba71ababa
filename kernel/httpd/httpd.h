/* kernel/httpd/httpd.h: the pprof.http=PORT server as the rest of the kernel sees it -- started once at boot,
 * reported by `net`. What it serves, its limits and its timeouts are docs/http.md's. */
#ifndef KERNEL_HTTPD_HTTPD_H
#define KERNEL_HTTPD_HTTPD_H

struct sink;

/* From kmain after the UDP shell (whose set-up reads udpsh.allow=): reads pprof.http=; off without it, and off
 * with one boot-log line when it is not a port or udpsh.key= cannot be used (kernel/net/boot_secret.h). */
void httpd_init(void);

/* One line for `net`: "http: off", or the port, the connections open, what was answered by status. */

#endif
