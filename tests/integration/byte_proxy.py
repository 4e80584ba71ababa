"""A TCP proxy that counts what crosses it, for measuring what a gdb session moves over COM2: gdb connects to
the proxy's port, the proxy to QEMU's chardev socket. Counts are of bytes as they travel (packets, acks,
checksums), each way; reset() between measurements. One connection at a time, as QEMU's chardev takes.

A gdb under measurement can mark the span itself: control_port takes one line per connection, "reset" (the
counts start again) or "counts" (answered "TO FROM REQUESTS"), so gdb's own attach and detach stay out of a
figure (gdb_marks() gives the Python to put in its script)."""

import os
import socket
import threading


class ByteProxy:
    def __init__(self, target_port, host="127.0.0.1"):
        self.target = (host, target_port)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((host, 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.to_target = 0    # gdb -> stub
        self.from_target = 0  # stub -> gdb
        self.packets_to_target = 0  # `$` seen gdb -> stub: requests
        self.closed = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        self.control = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.control.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.control.bind((host, 0))
        self.control.listen(4)
        self.control_port = self.control.getsockname()[1]
        threading.Thread(target=self._control, daemon=True).start()

    def _accepted(self, listener):
        """Each connection listener takes, until the proxy or the listener is closed."""
        while not self.closed:
            try:
                c, _ = listener.accept()
            except OSError:
                return
            yield c

    def _control(self):
        for c in self._accepted(self.control):
            with c:
                c.settimeout(10)
                try:
                    word = c.makefile("rb").readline().strip()
                    if word == b"reset":
                        self.reset()
                        c.sendall(b"ok\n")
                    elif word == b"counts":
                        c.sendall(b"%d %d %d\n" % self.counts())
                except OSError:
                    pass

    def gdb_marks(self):
        """(python for gdb that resets the counts, python that prints them as `@@bytes TO FROM REQUESTS`)."""
        ask = ("import socket as _s\n"
               "def _proxy(word):\n"
               "    c = _s.create_connection(('127.0.0.1', %d))\n"
               "    c.sendall(word + b'\\n')\n"
               "    got = c.makefile('rb').readline().decode().strip()\n"
               "    c.close()\n"
               "    return got\n" % self.control_port)
        return ask + "_proxy(b'reset')\n", "print('@@bytes ' + _proxy(b'counts'))\n"

    def reset(self):
        with self.lock:
            self.to_target = self.from_target = self.packets_to_target = 0

    def counts(self):
        with self.lock:
            return self.to_target, self.from_target, self.packets_to_target

    @property
    def total(self):
        a, b, _ = self.counts()
        return a + b

    def close(self):
        self.closed = True
        for s in (self.listener, self.control):
            try:
                s.close()
            except OSError:
                pass

    def _serve(self):
        for client in self._accepted(self.listener):
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                s.settimeout(None)
            done = threading.Event()
            t = threading.Thread(target=self._pump, args=(upstream, client, False, done), daemon=True)
            t.start()
            self._pump(client, upstream, True, done)
            t.join(timeout=5)
            for s in (client, upstream):
                try:
                    s.close()
                except OSError:
                    pass

    def _pump(self, src, dst, outbound, done):
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                for s in (src, dst):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                done.set()
                return
            with self.lock:
                if outbound:
                    self.to_target += len(data)
                    self.packets_to_target += data.count(b"$")
                else:
                    self.from_target += len(data)
            try:
                dst.sendall(data)
            except OSError:
                done.set()
                return


def measure_prof_buffers(proxy, elf, prof_py, timeout=120):
    """One batch gdb through proxy runs `prof buffers` (every CPU) between the proxy's marks; returns a dict:
    to/from (bytes each way), requests (packets gdb sent), records (the records it showed, summed over the
    CPUs), record_size (sizeof(struct profile_record), from the ELF), hex (the hex size of those records:
    what an m packet's answer carries for them) and seconds (prof buffers alone, timed in gdb)."""
    import re
    import subprocess
    start, end = proxy.gdb_marks()
    script = ("python\n" + start + "import time as _t\n_t0 = _t.monotonic()\n"
              "_out = gdb.execute('prof buffers', to_string=True)\n_dt = _t.monotonic() - _t0\n" + end +
              "print('@@seconds %.4f' % _dt)\n"
              "print('@@records %d' % sum(int(m) for m in __import__('re').findall("
              "r'(?m)^cpu \\d+: (\\d+) records of', _out)))\n"
              "print('@@record_size %d' % gdb.lookup_type('struct profile_record').sizeof)\nend\n")
    path = "/tmp/kprof-measure-%d-%d.gdb" % (os.getpid(), proxy.port)
    with open(path, "w") as f:
        f.write(script)
    argv = ["timeout", "-k", "3", str(timeout), "gdb", "-batch", "-nx", "-ex", "set pagination off",
            "-ex", "target remote 127.0.0.1:%d" % proxy.port, "-ex", "source %s" % prof_py, "-x", path,
            "-ex", "detach", elf]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                              timeout=timeout + 10)
    finally:
        os.unlink(path)
    got = {}
    for key in ("bytes", "seconds", "records", "record_size"):
        m = re.search(r"@@%s ([0-9. ]+)" % key, done.stdout)
        if not m:
            raise RuntimeError("gdb gave no %s (exit %d):\n%s\n%s" % (key, done.returncode, done.stdout[-2000:],
                                                                     done.stderr[-2000:]))
        got[key] = m.group(1).split()
    to, frm, requests = (int(x) for x in got["bytes"])
    records, size = int(got["records"][0]), int(got["record_size"][0])
    return {"to": to, "from": frm, "requests": requests, "records": records, "record_size": size,
            "hex": 2 * records * size, "seconds": float(got["seconds"][0])}
