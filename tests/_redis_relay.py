"""TCP relays to a real Redis on loopback, for tests that watch or break the traffic."""

from __future__ import annotations

import contextlib
import socket
import threading


class Relay:
    """Relays every connection made to :attr:`port` to the Redis on ``target``; subclasses see
    each chunk in :meth:`relay` and may cut the connection there."""

    def __init__(self, target: int) -> None:
        self.target = target
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", 0))
        self._relayed: list[socket.socket] = []  # closed by close(), not left to the collector
        self.port = self._server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def relay(self, src: socket.socket, data: bytes, to_server: bool) -> bool:
        """Whether to pass ``data`` on (False: close both ends of this connection instead)."""
        return True

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self._server.accept()
                upstream = socket.create_connection(("127.0.0.1", self.target))
                self._relayed += (client, upstream)
                threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
                threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, to_server: bool) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                if not self.relay(src, data, to_server):
                    for sock in (src, dst):
                        with contextlib.suppress(OSError):
                            sock.shutdown(socket.SHUT_RDWR)
                    return
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._server.close()
        for sock in self._relayed:
            sock.close()


class CountingProxy(Relay):
    """Counts the commands clients send (RESP arrays)."""

    def __init__(self, target: int) -> None:
        self.commands = 0
        self._pending: dict[socket.socket, bytes] = {}
        super().__init__(target)

    def relay(self, src: socket.socket, data: bytes, to_server: bool) -> bool:
        if to_server:
            buffer = self._pending.get(src, b"") + data
            while (pos := _command_end(buffer)) is not None:
                with self._lock:
                    self.commands += 1
                buffer = buffer[pos:]
            self._pending[src] = buffer
        return True


class ReplyCutter(Relay):
    """When told, drops the next replies: it closes the client's connection instead of passing
    a reply on (the server has run the request; the client never hears back)."""

    def __init__(self, target: int) -> None:
        self._cuts = 0
        super().__init__(target)

    def cut(self, replies: int) -> None:
        with self._lock:
            self._cuts = replies

    def relay(self, src: socket.socket, data: bytes, to_server: bool) -> bool:
        if to_server:
            return True
        with self._lock:
            if self._cuts <= 0:
                return True
            self._cuts -= 1
            return False


def _command_end(buffer: bytes) -> int | None:
    """Where the first complete RESP command in ``buffer`` ends (None: incomplete)."""
    line = buffer.find(b"\r\n")
    if line < 0:
        return None
    assert buffer[:1] == b"*", buffer[:20]
    pos = line + 2
    for _ in range(int(buffer[1:line])):
        end = buffer.find(b"\r\n", pos)
        if end < 0:
            return None
        size = int(buffer[pos + 1 : end])
        pos = end + 2 + size + 2
        if pos > len(buffer):
            return None
    return pos
