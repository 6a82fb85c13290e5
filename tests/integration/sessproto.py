# SPDX-License-Identifier: MIT
"""The session protocol (proto/sess_proto.h) as the integration tests
speak it raw on sess.sock, to check what the daemon does with well-formed
and malformed clients: constants, message builders, and a mixin that
connects and reads replies."""

import mmap
import os
import re
import socket
import struct

def _define(name):
    """'#define name' of proto/sess_proto.h: one source for the version."""
    src = os.environ.get("IBEMU_SOURCE_DIR",
                         os.path.join(os.path.dirname(__file__), "..", ".."))
    with open(os.path.join(src, "proto", "sess_proto.h")) as f:
        m = re.search(rf"#define\s+{name}\s+(0x[0-9a-fA-F]+|\d+)u?\b",
                      f.read())
    return int(m.group(1), 0)


MAGIC = _define("IBEMU_SESS_MAGIC")
VERSION = _define("IBEMU_SESS_VERSION")
(ERROR, CA_QUERY, REGISTER, UNREGISTER, OPEN, SEND, RECV,
 PORT_QUERY) = range(1, 9)
WAIT = 25
POSTS = 104  # the context page's count of posts
ADDR_QUERY = 40
PACK = 50


def addr_query(host=b"", port_guid=0, ip=0, port=0):
    """struct ibemu_sess_addr_query (96 bytes)."""
    if isinstance(host, str):
        host = host.encode()
    return struct.pack("=64sQQIIHHI", host, port_guid, 0, ip, port, 0, 0, 0)


def hdr(type_, length, version=VERSION, magic=MAGIC, status=0):
    return struct.pack("=IHHIi", magic, version, type_, length, status)


def bind(host=b"", port=0):
    if isinstance(host, str):
        host = host.encode()
    return struct.pack("=64sII", host, port, 0)


class SessionClient:
    """For IbemuTestCase subclasses: raw connections to a fabric's
    sess.sock and replies checked for magic, version and length."""

    def sess_path(self, fabric):
        return os.path.join(self.paths(fabric)["dir"], "sess.sock")

    def sess(self, fabric):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(10)
        s.connect(self.sess_path(fabric))
        return s

    def reply(self, s, size=1 << 19):
        """(type, status, body) of the next message, or None at EOF."""
        data = s.recv(size)
        if not data:
            return None
        magic, version, type_, length, status = struct.unpack(
            "=IHHIi", data[:16])
        self.assertEqual((magic, version, length),
                         (MAGIC, VERSION, len(data) - 16))
        return type_, status, data[16:]


class RawVerbs(SessionClient):
    """Verbs streams spoken raw: a context page, rings and calls built by
    hand, to write into shared memory what no library would."""

    def verbs_open(self, fabric, host):
        """A raw verbs stream: (socket, context page mmap)."""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(0x59616d61, ctypes.c_ulong(-1), 0, 0, 0)  # PR_SET_PTRACER
        self.probe = ctypes.c_uint64(0x1234abcd)
        page_fd = self.memfd(4096)
        page = mmap.mmap(page_fd, 4096)
        async_fd = os.eventfd(0, os.EFD_NONBLOCK)
        s = self.sess(fabric)
        msg = bind(host) + struct.pack("=QQ", ctypes.addressof(self.probe),
                                       self.probe.value)
        socket.send_fds(s, [hdr(9, len(msg)) + msg], [page_fd, async_fd])
        os.close(page_fd)
        self.addCleanup(os.close, async_fd)
        type_, status, body = self.reply(s)
        self.assertEqual((type_, status), (9, 0), body)
        return s, page, async_fd

    def posted(self, page):
        """Says on context page 'page' that work was posted, as the
        library does after it moves a producer index (the page's 'posts',
        byte 104: proto/verbs_proto.h asserts it); the daemon looks at a
        stream's rings only when that count moved."""
        n = struct.unpack("=Q", page[POSTS:POSTS + 8])[0]
        page[POSTS:POSTS + 8] = struct.pack("=Q", n + 1)

    def memfd(self, size):
        fd = os.memfd_create("ibemu-test", os.MFD_ALLOW_SEALING)
        os.ftruncate(fd, size)
        import fcntl
        fcntl.fcntl(fd, 1033, 0x2 | 0x4 | 0x1)  # F_ADD_SEALS
        return fd

    def call(self, s, type_, payload, fds=()):
        socket.send_fds(s, [hdr(type_, len(payload)) + payload], list(fds))
        return self.reply(s)

    def ring(self, entries, esz):
        size = 192 + entries * esz
        fd = self.memfd(size)
        return fd, mmap.mmap(fd, size)

    def make_qp(self, s, pd, cq):
        sq_fd, sq = self.ring(4, 560)
        rq_fd, rq = self.ring(4, 504)
        req = struct.pack("=14I", 2, 0, pd, cq, cq, 0, 4, 4, 1, 1, 0, 4, 4,
                          0)
        t, st, body = self.call(s, 16, req, [sq_fd, rq_fd])
        os.close(sq_fd)
        os.close(rq_fd)
        self.assertEqual((t, st), (16, 0), body)
        return struct.unpack("=14I", body)[13], sq, rq
