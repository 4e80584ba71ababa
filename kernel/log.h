/* kernel/log.h: boot and driver messages on the console, one line each (the newline is added). Task context
 * or boot; never from an interrupt handler. */
#ifndef KERNEL_LOG_H
#define KERNEL_LOG_H

__attribute__((format(printf, 1, 2))) void log_info(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void log_warn(const char *fmt, ...);

#endif
