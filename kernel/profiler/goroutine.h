/* kernel/profiler/goroutine.h: every task now, counted by chain -- Go's goroutine profile in kprof's terms
 * (kernel/profiler/goroutine.c), from the task dump (kernel/profiler/task_dump.h). Tasks are grouped by what tells them
 * apart: the chain (its kind and frames), the state and, waiting, what on, the task's name and its labels; each
 * group is one pprof sample of goroutine/count with labels `state`, `waiting_on`, `task` (the name) and the
 * task's own label pairs and span -- or, as text, Go's goroutine?debug=1:
 *
 *   goroutine profile: total 14
 *   4 @ 0x10a1e5 0x10a3b0 0x1003c4
 *   # labels: {"span":"17", "state":"waiting", "task":"work", "waiting_on":"sleep", "work":"serve"}
 *   #	0x10a1e5	work_wait+0x2a
 *   #	0x10a3b0	work_serve_request+0x61
 *   #	0x1003c4	task_entry_trampoline+0x14
 *
 * one paragraph per group, most tasks first, the count, " @ " and the frames' addresses, the labels sorted by key,
 * then a line per frame, resolved as `tasks` resolves them; a group with no chain says why in one "#" line.
 * debug=2 is the dump itself, as `tasks` prints it. Task context; pure but for the heap and the symbol table,
 * so the unit tests feed it dumps of their own. */
#ifndef KERNEL_PROFILER_GOROUTINE_H
#define KERNEL_PROFILER_GOROUTINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/profiler/pprof_builder.h"
#include "kernel/profiler/task_dump.h"

/* The name of the location a group without a chain stands on (a task running on another CPU, one its CPU ran
 * during every walk, one with no frames). */
#define GOROUTINE_ON_CPU "[running on another cpu]"
#define GOROUTINE_RAN_MEANWHILE "[ran meanwhile]"
#define GOROUTINE_NO_FRAMES "[no frames]"

/* The dump as a pprof profile into *data (kfree gives it back), *len bytes, uncompressed; addresses resolve
 * through tab. False (nothing allocated) when the heap says no. */
bool goroutine_encode(const struct task_dump *d, const struct symtab *tab, const struct pprof_mapping *mapping,
                      uint8_t **data, size_t *len);

struct sink;
/* The dump as Go's debug=1 text, resolved through tab. False (nothing written) when the heap had no room to
 * group it. */
bool goroutine_text(struct sink *out, const struct task_dump *d, const struct symtab *tab);

#endif
