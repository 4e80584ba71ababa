"""scripts/prof_heap.py: `prof heap [N]` in gdb -- the console's `mem sites [N]` (kernel/shell/cmd_mem.c,
kernel/profiler/heap_profile.c) for a machine gdb has stopped: the heap's table of allocation chains
(heap_site_table in kernel/heap.c, kernel/profiler/heap_sites.h) read from memory, the totals line and the N
chains holding the most bytes, in the console's format and order. scripts/prof.py loads it and hands it its
readers (register()).

How it can differ from a `mem sites` the console printed just before the stop: the console's own snapshot buffer
is a live block while it prints (it leaves it out of its copy, as this reads none), and whatever allocated or freed
between the two. The machine is stopped, so the table is read at one moment. Reads memory only: works through
QEMU's gdbstub too.
"""

import gdb

SHOWN = 10          # HEAP_SITES_SHOWN
SHOWN_MAX = 100     # the console's N bound
OTHER = "[other]"   # HEAP_PROFILE_OTHER
NO_FRAMES = "[boot]"  # HEAP_PROFILE_NO_FRAMES
SITES_MAX = 768     # HEAP_SITES_MAX: the chains the table takes before "other"


def register(prof):
    """Adds `prof heap` to prof.py's command family; prof is prof.py's namespace (its readers and commands)."""

    class _ProfHeap(prof._ProfCommand):
        """Who holds the stopped kernel's heap, as the console's `mem sites [N]` prints it: the totals, then the N
chains (default 10) holding the most bytes, with objects, allocations and frees, each chain call site first.
Usage: prof heap [N]"""

        def __init__(self):
            super().__init__("heap", lambda arg: heap(prof, arg))

    _ProfHeap()


def site_rows(table):
    """[(live bytes, live objects, allocs, frees, alloc bytes, frames)] of every slot that ever allocated, and
    "other" as one such tuple with no frames."""
    def row(s):
        allocs, frees = int(s["allocs"]), int(s["frees"])
        alloc_bytes, free_bytes = int(s["alloc_bytes"]), int(s["free_bytes"])
        frames = [int(s["frames"][i]) for i in range(int(s["nframes"]))]
        return (alloc_bytes - free_bytes, allocs - frees, allocs, frees, alloc_bytes, frames)

    slots = table["slot"]
    count = slots.type.range()[1] + 1
    rows = []
    for i in range(count):
        s = slots[i]
        if int(s["hash"]) != 0 and int(s["allocs"]) != 0:
            rows.append(row(s))
    return rows, row(table["other"])


def heap(prof, arg):
    words = gdb.string_to_argv(arg)
    top = SHOWN
    if len(words) > 1:
        raise gdb.GdbError("usage: prof heap [N]")
    if words:
        top = prof.parse_number(words[0], "N", 1, SHOWN_MAX)
    prof.check_running_build_id(prof.elf_build_id())
    table = prof.need_static("heap_site_table", "kernel/heap.c")
    rows, other = site_rows(table)
    # the kernel's order: live bytes, then live objects, then bytes ever allocated, most first
    rows.sort(key=lambda r: (r[0], r[1], r[4]), reverse=True)
    live_bytes = sum(r[0] for r in rows) + other[0]
    live_objects = sum(r[1] for r in rows) + other[1]
    allocs = sum(r[2] for r in rows) + other[2]
    frees = sum(r[3] for r in rows) + other[3]
    out = ["heap: %d chains hold %d bytes in %d objects; since boot %d allocations, %d frees"
           % (len(rows), live_bytes, live_objects, allocs, frees)]
    if other[2]:
        out[0] += "; %d allocations from chains past a full table of %d" % (other[2], SITES_MAX)
    out.append("%12s %8s %8s %8s  %s" % ("live bytes", "objects", "allocs", "frees", "chain (call site first)"))
    symtab = prof.symtab()
    for r in [r for r in rows if r[1]][:top]:
        names = []
        for addr in r[5]:
            hit = symtab.lookup_return(addr)
            names.append("%s+0x%x" % (hit.name, hit.offset) if hit else "0x%x" % addr)
        out.append("%12d %8d %8d %8d  %s" % (r[0], r[1], r[2], r[3], " <- ".join(names) if names else NO_FRAMES))
    if other[1]:
        out.append("%12d %8d %8d %8d  %s" % (other[0], other[1], other[2], other[3], OTHER))
    return "\n".join(out)
