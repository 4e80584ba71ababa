/* tests/unit/fake_commands.c: stand-ins for the shell's commands (kernel/shell/commands.h), so a test of one or two
 * of them links the real command table (kernel/shell/command_table.c) and sees the usage lines the kernel prints.
 * Each is weak: the real command a test links wins, and a stand-in that is run fails the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kernel/shell/commands.h"

#define STAND_IN(name)                                                                                             \
    __attribute__((weak)) int name(int argc, char **argv, struct sink *out, const struct shell_origin *from)       \
    {                                                                                                              \
        (void)argc, (void)argv, (void)out, (void)from;                                                             \
        fail_msg("%s is not linked into this test", #name);                                                        \
        return 1;                                                                                                  \
    }

STAND_IN(cmd_help)
STAND_IN(cmd_ps)
STAND_IN(cmd_stacks)
STAND_IN(cmd_uptime)
STAND_IN(cmd_mem)
STAND_IN(cmd_cpus)
STAND_IN(cmd_burn)
STAND_IN(cmd_work)
STAND_IN(cmd_selftest)
STAND_IN(cmd_panic)
STAND_IN(cmd_poweroff)
STAND_IN(cmd_profile)
STAND_IN(cmd_profile_stream)
STAND_IN(cmd_profile_top)
STAND_IN(cmd_lscpu)
STAND_IN(cmd_net)
STAND_IN(cmd_netload)
STAND_IN(cmd_label)
STAND_IN(cmd_tasks)
STAND_IN(cmd_locks)
STAND_IN(cmd_lockfight)
