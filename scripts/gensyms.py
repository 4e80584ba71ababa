#!/usr/bin/env python3
"""scripts/gensyms.py: turns `nm -n -S --defined-only` output of a kernel link pass (stdin) into the C source of
the kernel's symbol table (stdout) -- kernel_symbols, kernel_symbol_count and kernel_symbol_names as declared in
kernel/symbols.h -- and kernel_text_segment, where the text's loadable segment sits in memory and in the ELF file
(`--text-segment VADDR,FILESZ,OFFSET` from readelf of the same pass: a pprof mapping names the file offset, and
the kernel cannot learn it by itself). scripts/link.sh runs it once per pass; `--empty` writes the table the
first pass links with.

Kept: function symbols (nm types T and t, and W/w when they lie inside [__text_start, __text_end), since weak
symbols may as well be data). Dropped: the range markers themselves (the text's and the
debugger's code inside it) and assembler/compiler-local labels.
Symbols sharing an address collapse to one entry, so the lookup's "last symbol at or below" is well defined.
"""

import sys

TEXT_TYPES = {"T", "t"}
WEAK_TYPES = {"W", "w"}
RANGE_MARKERS = {b"__text_start", b"__text_end"}
# Markers of a range inside the text (the debugger's own code, arch/x86_64/linker.ld): no function's name.
INNER_MARKERS = {b"__debugger_text_start", b"__debugger_text_end"}
UINT32_MAX = 0xFFFFFFFF


class NmError(Exception):
    pass


def parse_nm(data):
    """Returns [(addr, size, type, name)] in input order; size is None when nm printed none."""
    entries = []
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        line = raw.rstrip(b"\r")
        if not line.strip():
            continue
        fields = line.split(None, 3)
        try:
            # "addr size type name": nm pads sizes to the address width, so a one-character second field is
            # the type of an "addr type name" line.
            if len(fields) == 4 and len(fields[1]) > 1 and len(fields[2]) == 1:
                entries.append((int(fields[0], 16), int(fields[1], 16), fields[2].decode("ascii"), fields[3]))
                continue
            if len(fields) >= 3 and len(fields[1]) == 1:
                name = line.split(None, 2)[2]
                entries.append((int(fields[0], 16), None, fields[1].decode("ascii"), name))
                continue
        except ValueError:
            pass
        raise NmError("line %d is not nm -n -S output: %r" % (lineno, raw.decode("latin-1")))
    return entries


def is_local_label(name):
    """Labels that name no function: .L* (compiler-generated), and gas's numeric local labels, which carry
    control characters (\\001, \\002) in their names when they reach the symbol table at all."""
    if name.startswith(b".L"):
        return True
    return any(b < 0x21 or b > 0x7E for b in name)


def text_range(entries):
    found = {}
    for addr, _size, _type, name in entries:
        if name in RANGE_MARKERS:
            found[name] = addr
    missing = [n.decode() for n in sorted(RANGE_MARKERS) if n not in found]
    if missing:
        raise NmError("nm output lacks %s (the linker script must define them)" % ", ".join(missing))
    start, end = found[b"__text_start"], found[b"__text_end"]
    if end < start:
        raise NmError("__text_end (%#x) is below __text_start (%#x)" % (end, start))
    return start, end


def select_symbols(entries):
    """Function symbols sorted by address, one per address: a global over a local, a strong over a weak,
    otherwise the first nm listed. Returns [(addr, size, name)]."""
    text_start, text_end = text_range(entries)
    # Rank: lower is preferred when two symbols share an address.
    rank_of = {"T": 0, "W": 1, "t": 2, "w": 3}
    best = {}
    for order, (addr, size, sym_type, name) in enumerate(entries):
        if sym_type in TEXT_TYPES:
            pass
        elif sym_type in WEAK_TYPES:
            if not text_start <= addr < text_end:
                continue
        else:
            continue
        if name in RANGE_MARKERS or name in INNER_MARKERS or not name or is_local_label(name):
            continue
        if size is None or size > UINT32_MAX:
            size = 0  # unknown: the lookup lets the symbol reach to the next one
        candidate = (rank_of[sym_type], order, addr, size, name)
        held = best.get(addr)
        if held is None or candidate[:2] < held[:2]:
            best[addr] = candidate
    return [(addr, size, name) for addr, (_r, _o, _a, size, name) in sorted(best.items())]


def c_string_piece(name):
    """The bytes of name as the inside of a C string literal. Octal escapes are always three digits, so a
    following digit can never extend them; '?' is escaped so no trigraph can form under -std=c11."""
    out = []
    for b in name:
        if b in (0x22, 0x5C, 0x3F):  # " \ ?
            out.append("\\" + chr(b))
        elif 0x20 <= b <= 0x7E:
            out.append(chr(b))
        else:
            out.append("\\%03o" % b)
    return "".join(out)


def render(symbols, segment=(0, 0, 0)):
    lines = [
        "/* Generated by scripts/gensyms.py from nm output of a kernel link pass; do not edit. */",
        '#include "kernel/symbols.h"',
        "",
        "const struct kernel_segment kernel_text_segment = { 0x%xull, 0x%xull, 0x%xull };" % segment,
    ]
    if not symbols:
        lines += [
            "/* No symbols yet. C forbids an empty initialiser, so the array holds one unused entry. */",
            "const struct ksym kernel_symbols[1] = { { 0, 0, 0 } };",
            "const uint32_t kernel_symbol_count = 0;",
            'const char kernel_symbol_names[] = "";',
        ]
        return "\n".join(lines) + "\n"

    offsets = {}
    blob_parts = []
    blob_len = 0
    entry_lines = []
    for addr, size, name in symbols:
        if name not in offsets:
            offsets[name] = blob_len
            blob_parts.append(name)
            blob_len += len(name) + 1
        entry_lines.append("    { 0x%016xull, %uu, %uu }," % (addr, size, offsets[name]))
    if blob_len > UINT32_MAX:
        raise NmError("symbol names need %d bytes, more than a uint32_t offset reaches" % blob_len)

    lines.append("const struct ksym kernel_symbols[] = {")
    lines += entry_lines
    lines.append("};")
    lines.append("const uint32_t kernel_symbol_count = %du;" % len(symbols))
    lines.append("/* NUL-separated; name_offset indexes it. */")
    lines.append("const char kernel_symbol_names[] =")
    lines += ['    "%s\\000"' % c_string_piece(name) for name in blob_parts]
    lines[-1] += ";"
    return "\n".join(lines) + "\n"


def parse_segment(text):
    """"VADDR,FILESZ,OFFSET" in hex (readelf's 0x... forms) -> a tuple of three ints."""
    parts = text.split(",")
    try:
        values = tuple(int(p, 16) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 3:
        raise NmError("--text-segment %r: want VADDR,FILESZ,OFFSET in hex" % text)
    return values


def main(argv):
    if argv[1:] == ["--empty"]:
        sys.stdout.write(render([]))
        return 0
    segment = (0, 0, 0)
    args = argv[1:]
    try:
        if len(args) == 2 and args[0] == "--text-segment":
            segment = parse_segment(args[1])
            args = []
        if args:
            sys.stderr.write("usage: nm -n -S --defined-only ELF | %s [--text-segment VADDR,FILESZ,OFFSET]\n"
                             "       %s --empty\n" % (argv[0], argv[0]))
            return 2
        symbols = select_symbols(parse_nm(sys.stdin.buffer.read()))
        sys.stdout.write(render(symbols, segment))
    except NmError as err:
        sys.stderr.write("gensyms: %s\n" % err)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
