"""The rooms' rules (docs/architecture.md, "Layers"), read from the tree's own #include lines and sizes, so a
change that breaks one fails here instead of being found by the next reader:

- kernel/lib/ includes only kernel/lib/ and the freestanding C headers (the host's <string.h> in
  kernel/lib/string.h alone, for the unit tests' build against the C library);
- hal/ includes only hal/ and the architecture's inline halves it names (arch/x86_64/context.h, cpu_inline.h);
- kernel/ and gdbstub/ include nothing from arch/: the portable side sees the machine only through hal/;
- arch/ includes nothing of the network, the UDP shell or the debugger's UDP transport: the timer's poll of a
  wedged network reaches the debugger through hal/kernel_entry.h;
- kernel/drivers/ holds its two rooms and nothing else, and neither includes the other: net/ (the cards behind
  kernel/net/netdev.h) and usb/ (the xHCI host, hubs, the keyboard); in kernel/drivers/ a header declares only
  the functions of its own .c, and the modules include each other without a circle, so no circle of calls hides
  behind a shared header; the USB core and its class drivers (usb/usb_*) include nothing of a host controller's
  driver (usb/xhci*), which they reach through usb/usb_host.h's operations, and the xHCI controller's state is
  private to usb/xhci.c;
- the shell's `net` includes no service: the UDP shell, the HTTP server, the boot secret and the debugger's UDP
  transport add their own lines (kernel/net/net_report.h), and kernel/shell/ includes nothing of the first three
  servers at all;
- kernel/ keeps at most 12 modules at its root (a .c and its .h are one), and no C file in the tree, tests
  included, is over 600 lines, and no function of the kernel (arch/, hal/, kernel/, gdbstub/) over 80.
"""

import os
import re
import subprocess

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
FREESTANDING = {"stddef.h", "stdint.h", "stdbool.h", "stdarg.h", "stdatomic.h", "limits.h", "stdalign.h",
                "stdnoreturn.h", "float.h", "iso646.h"}


def tracked(*roots):
    out = subprocess.run(["git", "ls-files", "--", *roots], cwd=TOP, capture_output=True, text=True, check=True)
    return [p for p in out.stdout.split() if p.endswith((".c", ".h", ".S"))]


def includes(path):
    with open(os.path.join(TOP, path), encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def offences(paths, allowed):
    bad = []
    for path in paths:
        for kind, name in includes(path):
            if not allowed(path, kind, name):
                bad.append("%s includes %s%s%s" % (path, kind, name, ">" if kind == "<" else '"'))
    return bad


def test_tree_is_a_git_checkout_with_the_rooms():
    # The other checks read `git ls-files`: an empty answer would make them pass on nothing.
    for room in ("kernel/lib", "kernel/profiler", "kernel/shell", "kernel/udpsh", "kernel/net", "kernel/drivers/net",
                 "kernel/drivers/usb", "gdbstub", "hal"):
        assert tracked(room), "no C files tracked under " + room


def test_lib_includes_only_lib_and_freestanding_headers():
    def allowed(path, kind, name):
        if kind == '"':
            return name.startswith("kernel/lib/")
        return name in FREESTANDING or (name == "string.h" and path == "kernel/lib/string.h")
    assert offences(tracked("kernel/lib"), allowed) == []


def test_hal_includes_only_hal_and_the_inline_halves_of_arch():
    def allowed(path, kind, name):
        if kind == "<":
            return name in FREESTANDING
        return name.startswith("hal/") or name in ("arch/x86_64/context.h", "arch/x86_64/cpu_inline.h")
    assert offences(tracked("hal"), allowed) == []


def test_net_prints_the_services_lines_without_including_a_service():
    services = ("kernel/udpsh/", "kernel/httpd/", "gdbstub/", "kernel/net/boot_secret.h")
    assert [n for _, n in includes("kernel/shell/cmd_net.c") if n.startswith(services)] == []
    assert ("\"", "kernel/net/net_report.h") in includes("kernel/shell/cmd_net.c")
    assert offences(tracked("kernel/shell"), lambda path, kind, name: not name.startswith(services[:3])) == []


def test_portable_code_includes_nothing_of_arch():
    def allowed(path, kind, name):
        return not name.startswith("arch/")
    assert offences(tracked("kernel", "gdbstub"), allowed) == []


def test_arch_includes_nothing_of_the_network_the_udp_shell_or_the_udp_debugger():
    def allowed(path, kind, name):
        return not name.startswith(("kernel/net/", "kernel/udpsh/", "gdbstub/udp"))
    assert offences(tracked("arch"), allowed) == []


def test_drivers_are_in_their_two_rooms_which_include_nothing_of_each_other():
    rooms = ("kernel/drivers/net/", "kernel/drivers/usb/")
    loose = [p for p in tracked("kernel/drivers") if not p.startswith(rooms)]
    assert loose == []
    for room in rooms:
        other = [r for r in rooms if r != room][0]
        assert offences(tracked(room), lambda path, kind, name: not name.startswith(other)) == []


def declared_functions(header_text):
    text = re.sub(r"/\*.*?\*/", "", header_text, flags=re.S)
    text = re.sub(r"^\s*#.*?(?<!\\)$", "", text, flags=re.M | re.S)
    while re.search(r"\{[^{}]*\}", text):  # struct bodies, inline functions
        text = re.sub(r"\{[^{}]*\}", ";", text)
    return set(re.findall(r"\b([A-Za-z_]\w*)\s*\([^;()]*(?:\([^;()]*\)[^;()]*)*\)\s*;", text)) - {"_Static_assert"}


def test_a_driver_header_declares_only_its_own_files_functions():
    wrong = []
    for header in [p for p in tracked("kernel/drivers") if p.endswith(".h")]:
        source = header[:-2] + ".c"
        with open(os.path.join(TOP, header), encoding="utf-8") as f:
            names = declared_functions(f.read())
        text = ""
        if os.path.exists(os.path.join(TOP, source)):
            with open(os.path.join(TOP, source), encoding="utf-8") as f:
                text = f.read()
        wrong += ["%s declares %s, which %s does not define" % (header, n, source) for n in sorted(names)
                  if not re.search(r"\b%s\s*\([^;{}]*\)\s*\{" % n, text)]
    assert wrong == []


def test_driver_modules_include_each_other_without_a_circle():
    # A module is a .c with its .h; an edge, a file of one including the header of another.
    edges = {}
    for path in tracked("kernel/drivers"):
        module = os.path.splitext(path)[0]
        for kind, name in includes(path):
            if kind == '"' and name.startswith("kernel/drivers/") and os.path.splitext(name)[0] != module:
                edges.setdefault(module, set()).add(os.path.splitext(name)[0])
    circles, state = [], {}

    def visit(module, trail):
        state[module] = "open"
        for other in sorted(edges.get(module, ())):
            if state.get(other) == "open":
                circles.append(" -> ".join(trail[trail.index(other):] + [other]))
            elif other not in state:
                visit(other, trail + [other])
        state[module] = "done"
    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_usb_class_drivers_reach_the_controller_only_through_usb_host():
    def allowed(path, kind, name):
        return not name.startswith("kernel/drivers/usb/xhci")
    assert offences([p for p in tracked("kernel/drivers/usb") if os.path.basename(p).startswith("usb_")],
                    allowed) == []
    defined = [p for p in tracked("kernel/drivers") if re.search(r"^struct xhci \{", open(os.path.join(TOP, p),
                                                                 encoding="utf-8").read(), re.M)]
    assert defined == ["kernel/drivers/usb/xhci.c"]


def test_kernel_root_holds_at_most_twelve_modules():
    root = [p for p in tracked("kernel") if "/" not in p[len("kernel/"):]]
    modules = sorted({os.path.splitext(os.path.basename(p))[0] for p in root})
    assert len(modules) <= 12, modules


def test_no_c_file_is_over_600_lines():
    long = []
    for path in tracked("."):
        if path.endswith(".c"):
            with open(os.path.join(TOP, path), encoding="utf-8") as f:
                n = sum(1 for _ in f)
            if n > 600:
                long.append("%s: %d lines" % (path, n))
    assert long == []


def function_lengths(path):
    """(name, lines) of each function defined in path, as STYLE.md lays one out: its signature from column 0
    (over one or more lines), its body between a "{" and a "}" alone at column 0; signature to brace, both
    counted."""
    with open(os.path.join(TOP, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    found, i = [], 0
    while i < len(lines):
        if lines[i] == "{":
            start = i - 1
            while start > 0 and lines[start - 1].strip() and not lines[start - 1].startswith("#") \
                    and not lines[start - 1].rstrip().endswith((";", "}", "*/", ")")):
                start -= 1
            end = lines.index("}", i) if "}" in lines[i:] else len(lines) - 1
            found.append((lines[start].split("(")[0].split()[-1].lstrip("*") if "(" in lines[start] else lines[start],
                          end - start + 1))
            i = end
        i += 1
    return found


def test_function_lengths_are_read_from_the_layout():
    # The check below must see functions at all: this file's own measure of a known one.
    lengths = dict(function_lengths("kernel/udpsh/auth.c"))
    assert 20 < lengths["udpsh_auth_judge"] <= 80


def test_no_function_of_the_kernel_is_over_80_lines():
    # A function a reader cannot hold in one screen hides its steps; the kernel's are named and split instead
    # (the tests' and fuzz targets' long setups are tables of cases, not steps, and are left out).
    long = ["%s: %s %d lines" % (path, name, n)
            for path in tracked("arch", "hal", "kernel", "gdbstub") if path.endswith(".c")
            for name, n in function_lengths(path) if n > 80]
    assert long == []


def test_architecture_page_names_every_source_file():
    # docs/architecture.md's "Every file, one line" table is how a newcomer finds a file by what it does: a file
    # added or moved without its row there is a file nobody finds.
    with open(os.path.join(TOP, "docs", "architecture.md"), encoding="utf-8") as f:
        page = f.read()
    named = set()
    for cell in re.findall(r"^\| `([^`]+)` \|", page, re.M):
        stem, ext = os.path.splitext(cell.split("/.")[0])
        named.add(cell.split("/.")[0])
        for other in cell.split("/.")[1:]:
            named.add(stem + "." + other)
    missing = [p for p in tracked("arch", "hal", "kernel", "gdbstub") if p not in named]
    stale = sorted(n for n in named if n.startswith(("arch/", "hal/", "kernel/", "gdbstub/"))
                   and not os.path.exists(os.path.join(TOP, n)))
    assert (missing, stale) == ([], [])


def test_httpd_includes_what_its_room_allows_and_only_main_and_net_include_it():
    # kernel/httpd/ sits with the shells (docs/architecture.md): lwIP only in httpd.c, the one file that runs in
    # the network task; and the rest of the kernel reaches the server through kernel/main.c and `net` alone --
    # so nothing in kernel/profiler/ calls back up into it (a profile runs in a session's own task).
    rooms = ("kernel/lib/", "kernel/httpd/", "kernel/net/", "hal/", "kernel/profiler/pprof.h",
             "kernel/profiler/session.h", "kernel/shell/commands.h", "kernel/heap.h", "kernel/log.h", "kernel/task.h", "kernel/cmdline.h")

    def allowed(path, kind, name):
        if kind == "<":
            return name in FREESTANDING
        return name.startswith(rooms) or (name.startswith("lwip/") and path == "kernel/httpd/httpd.c")
    assert offences(tracked("kernel/httpd"), allowed) == []

    def outside(path, kind, name):
        return not name.startswith("kernel/httpd/") or path.startswith("kernel/httpd/") or \
            path == "kernel/main.c"
    assert offences(tracked("arch", "hal", "kernel", "gdbstub"), outside) == []
