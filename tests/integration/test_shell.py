"""The shell on COM1: every command known to help, bad arguments answered in one line, garbage and overlong
lines refused without harm, line editing. One kernel for the module; after each abuse the shell must still
answer, and at the end the heap must be back where it started (nothing leaked, nothing overflowed).
"""

import os
import random
import re
import time

import pytest

from kprof_qemu import PROMPT, KprofError, boot_kernel, heap_used, poll, ps_table, unstarved

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_bad_arguments_to_panic_and_poweroff 1, test_help_lists_every_command 1,
# test_a_console_nobody_reads_stops_holding_writers_and_counts_what_it_lost 1,
# test_a_bad_console_stall_option_is_one_line_and_the_default 1.
BOOTS = 4

COMMANDS = ["help", "ps", "stacks", "uptime", "mem", "cpus", "burn", "panic", "poweroff"]


@pytest.fixture(scope="module")
def baseline(kernel):
    """The heap's used bytes before this module abuses the shell."""
    return heap_used(kernel)


def assert_answering(k, baseline=None):
    """The shell runs commands, and the heap is back to baseline (polled: freeing may be deferred)."""
    out = k.cmd("help")
    assert set(COMMANDS) <= {l.split()[0] for l in out.split("\n") if l.strip()}, "help said:\n%s" % out
    if baseline is not None:
        poll("heap used back to %d bytes" % baseline, lambda: heap_used(k) == baseline, timeout=10)


def test_help_lists_every_command(kernel, baseline):
    out = kernel.cmd("help")
    first_words = [l.split()[0] for l in out.split("\n") if l.strip()]
    missing = [c for c in COMMANDS if c not in first_words]
    assert not missing, "help does not list %s:\n%s" % (missing, out)


def test_mem_reports_heap_statistics(kernel, baseline):
    out = kernel.cmd("mem")
    m = re.search(r"(?m)^heap: used (\d+) bytes in (\d+) blocks, peak (\d+), free (\d+), largest free (\d+), "
                  r"total (\d+)$", out)
    assert m, "mem said:\n%s" % out
    used, blocks, peak, free, largest, total = map(int, m.groups())
    assert 0 < used <= peak and largest <= free < total and used + free <= total, "mem said:\n%s" % out
    m = re.search(r"(?m)^heap: allocs (\d+), frees (\d+), failed (\d+)$", out)
    assert m, "mem said:\n%s" % out
    allocs, frees, failed = map(int, m.groups())
    assert allocs - frees == blocks, "allocs %d - frees %d != %d live blocks" % (allocs, frees, blocks)


def test_unknown_command(kernel, baseline):
    assert kernel.cmd("frobnicate") == "unknown command: frobnicate (try help)"
    assert kernel.cmd("  frobnicate   now ") == "unknown command: frobnicate (try help)"


def test_empty_and_blank_lines_do_nothing(kernel, baseline):
    assert kernel.cmd("") == ""
    assert kernel.cmd(" " * 40) == ""
    assert_answering(kernel, baseline)


# Each line is wrong for its command; the answer is one line, "usage: ..." or "<cmd>: <reason>".
BAD_ARGS = [
    "help no-such-command extra",
    "ps extra", "stacks extra", "uptime extra", "cpus extra", "mem bogus", "mem bogus extra",
    "burn 0", "burn 60001", "burn -5", "burn abc", "burn 10x", "burn 0x 1", "burn 0xg 1", "burn 0x10x 1",
    "burn 1.5", "burn 500 0", "burn 500 17",
    "burn 500 -1", "burn 500 abc", "burn 500 4 extra", "burn 99999999999999999999999",
    "burn 500 99999999999999999999999", "burn 4294967796", "burn spans x", "burn spans 1 2", "burn 500 1 span",
]


@pytest.mark.parametrize("line", BAD_ARGS)
def test_bad_arguments_get_one_line(kernel, baseline, line):
    out = kernel.cmd(line)
    name = line.split()[0]
    assert re.fullmatch(r"(usage: |%s: )[^\n]+" % name, out), "%r answered:\n%s" % (line, out)
    assert not out.startswith("burn: started"), "%r started a burn" % line


def test_bad_arguments_started_nothing(kernel, baseline):
    assert not [t for t in ps_table(kernel) if t[3] == "burn"], "a bad burn line left burn tasks"
    assert kernel.cmd("burn") == "burn: no run finished yet"
    assert_answering(kernel, baseline)


def test_bad_arguments_to_panic_and_poweroff(fresh_kernel):
    # In a kernel of its own: a panic or poweroff that ignored its arguments ends the kernel.
    for line in ["panic extra", "poweroff extra", "poweroff now please"]:
        out = fresh_kernel.cmd(line)
        assert re.fullmatch(r"(usage: |%s: )[^\n]+" % line.split()[0], out), "%r answered:\n%s" % (line, out)
    assert_answering(fresh_kernel)


def garbage_lines():
    """Lines of binary bytes and control characters (never CR or LF, which end a line)."""
    rng = random.Random(2)  # fixed: a failure replays
    every_byte = [chr(b) for b in range(256) if b not in (0x0a, 0x0d)]
    lines = []
    for _ in range(4):
        rng.shuffle(every_byte)
        lines += ["".join(every_byte[i:i + 64]) for i in range(0, len(every_byte), 64)]
    lines += [chr(c) * 3 for c in range(0x20) if c not in (0x0a, 0x0d)]
    lines += ["he\x00lp", "\x1b[A\x1b[B\x1b[C\x1b[D", "\x1b", "\x1b[", "\x1b[999999999999;99999999999H",
              "\x7f" * 300, "\x08" * 300, "\t\t", "ps\textra", "\xff\xfe\xfd", "\x03", "\x04", "\x1a",
              "ps\x00extra", "%s%s%s%n%n", "help " + "%p" * 100]
    return lines


def test_garbage_lines_leave_the_shell_answering(kernel, baseline):
    for line in garbage_lines():
        kernel.send(line + "\r")
        try:
            before = kernel.sync()
        except KprofError as e:
            raise KprofError("after the garbage line %r (%d bytes) the shell stopped answering: %s"
                             % (line[:80], len(line), e)) from None
        assert not re.search(r"(?m)^panic:", before), "garbage line %r caused:\n%s" % (line, before)
    assert_answering(kernel, baseline)


def test_crlf_ends_a_line_once_and_lf_ends_a_line(kernel, baseline):
    kernel.send("uptime\r\n")
    before = kernel.sync(kill_line=False)  # no Ctrl-U: its redraw must not count as a prompt
    assert len(re.findall(r"(?m)^up \d+\.\d{3} s$", before)) == 1, "uptime\\r\\n gave:\n%s" % before
    assert len(re.findall(r"(?m)^> ", before)) == 1, "CRLF counted twice (an extra prompt):\n%s" % before
    kernel.send("uptime\n")
    before = kernel.sync(kill_line=False)
    assert len(re.findall(r"(?m)^up \d+\.\d{3} s$", before)) == 1, "uptime\\n gave:\n%s" % before


def test_line_editing_backspace_and_ctrl_u(kernel, baseline):
    assert kernel.cmd("uptimx\x7fe").startswith("up "), "DEL did not erase"
    assert kernel.cmd("uptimx\x08e").startswith("up "), "backspace did not erase"
    assert kernel.cmd("frobnicate\x15uptime").startswith("up "), "Ctrl-U did not kill the line"
    assert kernel.cmd("\x7f\x7f\x08uptime").startswith("up "), "backspace on an empty line misbehaved"


def test_longest_line_is_accepted_and_one_more_is_refused(kernel, baseline):
    # The shell may shorten the name it quotes back; what matters is that the line was taken, not refused.
    out = kernel.cmd("x" * 255, timeout=30)
    assert re.fullmatch(r"unknown command: x+ \(try help\)", out), "a 255-character line gave:\n%s" % out
    assert kernel.cmd("x" * 256, timeout=30) == "line too long (max 255 characters)"


def test_10000_character_line_is_refused(kernel, baseline):
    # A valid command padded past the limit: refusing must not mean running a truncated line.
    for line in ["x" * 10000, "burn 1 1" + " " * 9992]:
        kernel.send(line + "\r", timeout=120)
        m = kernel.expect(r"(?m)^line too long \(max 255 characters\)\n> ", timeout=60,
                          what="the refusal of a 10000-character line")
        assert "unknown command" not in m.before and "burn:" not in m.before, \
            "the overlong line ran:\n%s" % m.before[-500:]
        kernel.sync()
    assert kernel.cmd("burn") == "burn: no run finished yet", "the padded burn line ran"
    assert_answering(kernel, baseline)


# ---- output a slow reader holds back: delayed, never lost -------------------------------------------------------
HELD_BACK_COMMANDS = 40    # `help` is ~2.8 KB: ~115 KB, past the pty's buffer and COM1's 64 KiB ring (~85 KB)
HELD_BACK_SECONDS = 4      # the host reads nothing meanwhile: longer than a polled writer's wait per byte


def test_output_a_slow_reader_holds_back_is_delayed_not_lost(kernel, baseline):
    """A host that stops reading the console (a loaded machine, a paused terminal) fills QEMU's side of the line;
    QEMU then keeps COM1's transmitter busy, and the kernel must wait for it: every byte arrives, in order. A
    writer that gave up waiting after a bound overwrote the FIFO and lost bytes mid-line (seen under load as a raw
    profile's line with five bytes missing)."""
    reference = kernel.cmd("help")
    os.write(kernel.child.child_fd, b"help\r" * HELD_BACK_COMMANDS)  # the whole burst, then no reading at all
    time.sleep(HELD_BACK_SECONDS)
    for i in range(HELD_BACK_COMMANDS):
        m = kernel.expect(r"\n%s" % re.escape(PROMPT), timeout=60, what="the prompt after help %d" % (i + 1))
        echo, _, out = m.before.partition("\n")
        assert echo.endswith("help") and out == reference, \
            "help %d of %d came back different (a byte lost or out of order):\n%r\nwant:\n%r" \
            % (i + 1, HELD_BACK_COMMANDS, m.before, reference)
    assert "bytes lost" not in kernel.log, "the console said it lost bytes:\n%s" % kernel.log[-2000:]
    assert_answering(kernel, baseline)


STALL_MS = 1000            # console.stall_ms=: writers stop waiting after 1 s of a line that moves nothing
STALLED_SECONDS = 6        # the host reads nothing for this long: the ring and the pty fill, then STALL_MS passes
# The pty QEMU writes to turns each "\n" into "\r\n" (ONLCR): the kernel's "\r\n" arrives as "\r\r\n".
LOST_NOTE = re.compile(r"\r+\n\[console: (\d+) bytes lost: the serial line did not drain\]\r+\n")


def sent_bytes(text):
    """The bytes the kernel sent for text as read from the pty: less the carriage return the pty added to each
    line feed it passed on."""
    return len(text) - text.count("\n")


def test_a_console_nobody_reads_stops_holding_writers_and_counts_what_it_lost(kprof_factory):
    """A console nobody reads must not hold the kernel's writers for ever: after console.stall_ms= (default 10 s;
    1 s here) without a byte moving they stop waiting, and what does not fit is dropped -- and counted, in a line
    of its own once the line moves again. The count is checked to the byte: what arrived, less that line, plus
    the count is exactly what the burst of commands wrote (each help's echo, output and prompt, the same bytes
    every time). A burst that lost nothing is retried only if the host starved QEMU meanwhile (unstarved)."""
    k = boot_kernel("console.stall_ms=%d" % STALL_MS, make=kprof_factory,
                    boot_log_has="console: writers wait %d ms on a stalled line (console.stall_ms=, a test knob)"
                    % STALL_MS)
    k.cmd("help")
    mark = len(k.log)
    k.cmd("help")
    cycle = sent_bytes(k.log[mark:])  # what one help writes: its echo, its output and the next prompt
    assert k.log.endswith("\r\n" + PROMPT), "help's output did not end at the prompt:\n%r" % k.log[mark:]

    def attempt():
        k.sync()
        start = len(k.log)
        os.write(k.child.child_fd, b"help\r" * HELD_BACK_COMMANDS)
        time.sleep(STALLED_SECONDS)
        k.send("uptime\r")  # its echo comes after the burst's last prompt, and the lost line before it
        # read prompt by prompt, so that no wait searches the whole burst again at every read
        while not re.search(r"(^|\n)uptime\nup \d+\.\d{3} s$",
                            k.expect(r"\n%s" % re.escape(PROMPT), timeout=60, what="a prompt after the burst").before):
            pass
        got = k.log[start:]
        notes = LOST_NOTE.findall(got)
        assert notes, "no line of lost bytes after %d s of a console nobody read (%d bytes arrived)" \
            % (STALLED_SECONDS, len(got))
        assert len(notes) == 1, "the lost bytes were counted in %d lines:\n%s" % (len(notes), notes)
        burst = LOST_NOTE.sub("", got)
        burst = burst[:burst.rindex("uptime\r")]
        lost = int(notes[0])
        assert lost > 0 and sent_bytes(burst) + lost == HELD_BACK_COMMANDS * cycle, \
            "%d bytes arrived and %d were counted lost, want %d (%d helps of %d bytes)" \
            % (sent_bytes(burst), lost, HELD_BACK_COMMANDS * cycle, HELD_BACK_COMMANDS, cycle)

    unstarved(k, attempt, "a burst of helps, the console unread for %d s" % STALLED_SECONDS)
    assert_answering(k)


def test_a_bad_console_stall_option_is_one_line_and_the_default(kprof_factory):
    k = boot_kernel("console.stall_ms=5", make=kprof_factory,
                    boot_log_has="warning: console: console.stall_ms=5 is not 100..60000 ms; writers wait 10000 ms "
                                 "on a stalled line")
    assert "writers wait 5 ms" not in k.boot_log
    assert_answering(k)
