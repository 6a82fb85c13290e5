# SPDX-License-Identifier: MIT
"""The session protocol (proto/sess_proto.h) as the integration tests
speak it raw on sess.sock, to check what the daemon does with well-formed
and malformed clients: constants, message builders, and a mixin that
connects and reads replies."""

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
