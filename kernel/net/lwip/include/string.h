/* kernel/net/lwip/include/string.h: lwIP includes <string.h>; without a C library that is the kernel's own
 * (this directory is on the include path of lwIP and kernel/net only). */
#ifndef KPROF_LWIP_SHIM_STRING_H
#define KPROF_LWIP_SHIM_STRING_H

#include "kernel/lib/string.h"

#endif
