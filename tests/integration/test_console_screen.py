"""The console as a user's terminal shows it: kprof started as `make run` starts it (scripts/qemu.sh with make
run's options) inside tmux, read back with `tmux capture-pane -p` -- the screen after the terminal acted on every
control sequence -- and the pane's raw bytes (kprof_qemu.TerminalKprof). Two behaviours:

- a log line that arrives while the prompt waits (DHCP's address: the NIC's link is down from the start, and
  comes up only once half a line is typed, so the line arrives then and only then) is drawn above the prompt,
  and the prompt with the half-typed line is drawn again below it, typing going on where it was;
- `profile top 500 5` while `burn` runs on every CPU: five frames, in order, each redrawn over the last (cursor
  home, erase below); burn_inner on top while burn runs, the idle loop once it has ended, never burn again after
  idle; the prompt back at the end, and nothing of the control sequences left on the screen. Over the UDP shell
  (the network up after the first test) the same command sends each frame as one datagram, and no control bytes.

Counts, content and order only: every wait is for an event on the screen or in the bytes, with a deadline.
"""

import re

import pytest

from kprof_net import UdpShell, exchange
from kprof_qemu import TerminalKprof, last_line, unstarved

# One kernel (under tmux) for both tests; its link is down until the first test brings it up.
BOOTS = 1

ADDRESS = r"net: address \d+\.\d+\.\d+\.\d+/\d+ gateway [\d.]+ \(dhcp\)"
CLEAR = "\x1b[H\x1b[J"


@pytest.fixture(scope="module")
def term():
    t = TerminalKprof(before_start=["set_link n0 off"])
    try:
        t.start()
        t.wait_ready()
        yield t
    finally:
        t.kill()


def screen_lines(t):
    return [l for l in t.screen().split("\n") if l.strip()]


def test_log_line_is_drawn_above_the_prompt(term):
    # no DHCP answer can come while the link is down: the address line has not been printed yet
    assert not re.search(ADDRESS, term.raw()), "the address came with the link down:\n%s" % term.screen()
    term.type("upti")
    term.wait_screen(lambda s: last_line(s) == "> upti", what="the half-typed line after the prompt")
    term.monitor("set_link n0 on")
    # DHCP's retry now gets its answer: wait for its line, then for the screen to settle with the prompt last
    term.wait_screen(ADDRESS, timeout=30, what="DHCP's address line on the screen")
    term.wait_screen(lambda s: last_line(s) == "> upti", what="the prompt and the half line below the log line")
    lines = screen_lines(term)
    at = [i for i, l in enumerate(lines) if re.search(ADDRESS, l)]
    assert len(at) == 1, "the address line is not on the screen once:\n%s" % "\n".join(lines)
    assert re.fullmatch(ADDRESS, lines[at[0]]), "the address line shares its row:\n%s" % lines[at[0]]
    assert lines[at[0] + 1:] == ["> upti"], "the prompt and half line are not just below it:\n%s" % "\n".join(lines)
    assert sum(l.startswith(">") for l in lines[at[0] - 1:at[0]]) == 0, \
        "the old prompt was left above the log line:\n%s" % "\n".join(lines)
    # typing goes on where it was: the whole line runs
    term.type("me\r")
    term.wait_screen(lambda s: re.search(r"(?m)^> uptime\nup[^\n]*\n>$", s.rstrip()), what="uptime's answer")


def test_profile_top_redraws_in_place(term):
    # the network up (the first test does it; alone, this one), DHCP's line printed, so none lands among the frames
    term.monitor("set_link n0 on")
    term.wait_raw(ADDRESS, timeout=30, what="DHCP's address line")
    # burn's window and top's are the kernel's time: a host that starves QEMU can shift one against the other,
    # which the starved-QEMU rule retries (the kernel's own tick counters, over UDP, say whether it was so)
    unstarved(UdpShell(term.udp_port), lambda: top_during_burn(term), "profile top 500 5 during burn 1500 4")


def top_during_burn(term):
    start = len(term.raw())
    # both lines in one piece: the second waits in the input ring while burn starts its tasks, so top's first
    # interval begins right after burn's, in the kernel's time, however slow the host is to type
    term.type("burn 1500 4\rprofile top 500 5\r")
    term.wait_raw(r"top 5/5:", timeout=60, what="the fifth frame")
    term.wait_screen(lambda s: last_line(s) == ">", timeout=30, what="the prompt after the last frame")
    raw = term.raw()[start:].replace("\r", "")
    after = raw[raw.index("profile top 500 5"):]
    frames = after.split(CLEAR)[1:]
    assert len(frames) == 5, "%d frames, not 5:\n%r" % (len(frames), after)
    tops = []
    for n, frame in enumerate(frames, 1):
        lines = frame.split("\n")
        assert lines[0].startswith("top %d/5: 500 ms, " % n), "frame %d begins %r" % (n, lines[0])
        assert lines[1].startswith("source "), "frame %d names no source: %r" % (n, lines[1])
        assert lines[2].split() == ["last", "since", "function"], "frame %d: %r" % (n, lines[2])
        tops.append(lines[3].split()[-1])
        assert ("(any key stops)" in frame) == (n < 5), "frame %d and its hint:\n%s" % (n, frame)
    # the screen: the last frame alone, then the prompt, and no trace of a control sequence
    screen = term.screen()
    assert "\x1b" not in screen and not re.search(r"\[[0-9;]*[HJK]", screen), "control bytes on screen:\n" + screen
    assert screen.count("top 5/5:") == 1 and "top 4/5:" not in screen, "frames not redrawn in place:\n" + screen
    assert screen.count("last  since  function") == 1, screen
    lines = screen_lines(term)
    assert lines[0].startswith("top 5/5: 500 ms, "), "the last frame is not at the top:\n" + screen
    assert lines[-1] == ">", screen
    # last: what depends on the kernel's timing (burn's 1500 ms against top's intervals)
    assert tops[0] == "burn_inner", "burn is not on top while it runs: %s" % tops
    assert tops[-1] == "sched_idle_loop", "the idle loop is not on top after burn ended: %s" % tops
    first_idle = tops.index("sched_idle_loop")
    assert all(t == "burn_inner" for t in tops[:first_idle]) and \
        all(t == "sched_idle_loop" for t in tops[first_idle:]), "burn after idle, or a third on top: %s" % tops


def test_profile_top_over_udp_is_a_datagram_a_frame(term):
    reply = exchange(term.udp_port, b"profile top 100 3", timeout=30)
    assert reply.problem() is None, reply.problem()
    frames = [c.decode("ascii") for c in reply.chunks]
    assert len(frames) == 3, "%d datagrams, not 3 frames:\n%r" % (len(frames), frames)
    assert sorted(f.split(":")[0] for f in frames) == ["top 1/3", "top 2/3", "top 3/3"], frames
    for f in frames:
        assert f.count("top ") == 1 and "\x1b" not in f and "(any key stops)" not in f, f
        assert f.split("\n")[2].split() == ["last", "since", "function"], f
