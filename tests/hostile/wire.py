# SPDX-License-Identifier: MIT
"""The few pieces of the daemon's two wire protocols the hostile clients
need: headers (proto/ctl_proto.h, proto/sess_proto.h) and connections."""

import os
import re
import socket
import struct


def proto_define(header, name):
    """The value of '#define name' in proto/'s 'header': the protocols'
    magics and versions have one source, the C headers."""
    src = os.environ.get("IBEMU_SOURCE_DIR",
                         os.path.join(os.path.dirname(__file__), "..", ".."))
    with open(os.path.join(src, "proto", header)) as f:
        m = re.search(rf"#define\s+{name}\s+(0x[0-9a-fA-F]+|\d+)u?\b",
                      f.read())
    return int(m.group(1), 0)


CTL_MAGIC = proto_define("ctl_proto.h", "IBEMU_CTL_MAGIC")
CTL_VERSION = proto_define("ctl_proto.h", "IBEMU_CTL_VERSION")
CTL_HELLO, CTL_REQUEST, CTL_REPLY, CTL_ERROR, CTL_PROGRESS = range(1, 6)

SESS_MAGIC = proto_define("sess_proto.h", "IBEMU_SESS_MAGIC")
SESS_VERSION = proto_define("sess_proto.h", "IBEMU_SESS_VERSION")
SESS_ERROR, SESS_CA_QUERY, SESS_REGISTER, SESS_UNREGISTER, SESS_OPEN, \
    SESS_SEND, SESS_RECV = range(1, 8)

HDR = struct.Struct("=IHHIi")  # magic, version, type, len, status


def ctl_msg(type_, payload=b""):
    return HDR.pack(CTL_MAGIC, CTL_VERSION, type_, len(payload), 0) + payload


def ctl_request(*argv):
    return ctl_msg(CTL_REQUEST, b"".join(a.encode() + b"\0" for a in argv))


def ctl_connect(path):
    """A greeted control connection."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    s.sendall(ctl_msg(CTL_HELLO))
    head = recv_exact(s, HDR.size)
    magic, _, type_, length, _ = HDR.unpack(head)
    body = recv_exact(s, length)
    if magic != CTL_MAGIC or type_ != CTL_HELLO:
        raise RuntimeError(f"no HELLO: {body!r}")
    return s


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def sess_msg(type_, payload=b""):
    return HDR.pack(SESS_MAGIC, SESS_VERSION, type_, len(payload), 0) + payload


def sess_call(path, type_, payload):
    """One call on a new connection: (type, status, body)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(path)
    s.send(sess_msg(type_, payload))
    data = s.recv(1 << 16)
    s.close()
    _, _, t, _, status = HDR.unpack(data[:HDR.size])
    return t, status, data[HDR.size:]


def bind_payload(host=b"", port=0):
    return struct.pack("=64sII", host, port, 0)


def sess_open(path):
    """A port stream of this process: (socket, session)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(path)
    s.send(sess_msg(SESS_OPEN, bind_payload()))
    data = s.recv(1 << 16)
    _, _, t, _, status = HDR.unpack(data[:HDR.size])
    if t != SESS_OPEN:
        raise RuntimeError(f"OPEN refused ({status}): {data[HDR.size:]!r}")
    session, = struct.unpack_from("=Q", data, HDR.size + 64)
    return s, session


def send_mad(agent, mad, pkey_index=0):
    addr = struct.pack("=IIHHBBBBBBHI16s", 1, 0x80010000, 0xffff, pkey_index,
                       0, 0, 0, 0, 0, 0, 0, 0, b"")
    # struct ibemu_sess_mad: ..., len, reserved, vt_ps (0: at once)
    head = struct.pack("=IIII", agent, 0, 0, 0) + addr + \
        struct.pack("=IIQ", len(mad), 0, 0)
    return sess_msg(SESS_SEND, head + mad)
