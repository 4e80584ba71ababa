"""Typing on a kernel's USB keyboard through QEMU's QMP (input-send-event), for tests/integration/test_usb_kbd.py
and test_msi.py.

Owns: WAIT (the wait for each echo), QCODES/qcode (a character's QEMU key code), key_event (one key down or up),
press (a key down and up) and type_line (a line typed key by key, each echo waited for on COM1, then Enter; the
output up to the next prompt).
"""

import re

from kprof_qemu import PROMPT

WAIT = 60.0  # generous: TCG on a loaded machine

QCODES = {" ": "spc", "\r": "ret", "-": "minus", ".": "dot", "/": "slash"}


def qcode(ch):
    return QCODES.get(ch, ch)


def key_event(k, name, down):
    k.qmp("input-send-event", {"events": [{"type": "key", "data": {
        "down": down, "key": {"type": "qcode", "data": name}}}]})


def press(k, name):
    k.qmp("input-send-event", {"events": [
        {"type": "key", "data": {"down": True, "key": {"type": "qcode", "data": name}}},
        {"type": "key", "data": {"down": False, "key": {"type": "qcode", "data": name}}}]})


def type_line(k, line):
    """Types line on the USB keyboard a key at a time, each waited for as its echo on COM1 (the keyboard's own
    queue is short), then Enter. Returns the output up to the next prompt."""
    k.drain()
    k._buf = ""
    for ch in line:
        press(k, qcode(ch))
        k.expect(re.escape(ch), timeout=WAIT, what="the echo of %r typed on the USB keyboard" % ch)
    press(k, "ret")
    m = k.expect(r"\n" + re.escape(PROMPT), timeout=WAIT, what="the prompt after %r typed on USB" % line)
    return m.before[1:] if m.before.startswith("\n") else m.before
