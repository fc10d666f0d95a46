"""A gRPC "server" on 127.0.0.1 that speaks just enough HTTP/2 (frames written by hand, RFC 9113) to answer
every call with `:status 200`, `content-type: application/grpc` and then a broken gRPC message framing:

  flag        a message frame whose flag byte is 0xff (neither 0 nor 1), then an OK status
  compressed  a message flagged compressed though no grpc-encoding was named, then an OK status
  short       a message frame whose length prefix runs past the end of the stream (no trailers)
  status13    no garbage: a real INTERNAL status with its message, `boom` (the control)
  notrailers  a whole, valid message (an empty one: every field at its default), then nothing: no status, ever
  notrailers-task  the same with a Task whose id is t-1 (the answer of GetTask)

    with GarbageGrpc("compressed") as server:
        server.url  # http://127.0.0.1:PORT
"""

from __future__ import annotations

import asyncio
import struct
import threading


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _literal(name: bytes, value: bytes) -> bytes:  # HPACK: a literal header field without indexing, new name
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


HEADERS = b"\x88" + b"\x0f\x10" + bytes([16]) + b"application/grpc"  # :status 200 (static 8), content-type (31)
DATA, HEADERS_FRAME, SETTINGS = 0, 1, 4
END_STREAM, END_HEADERS, ACK = 1, 4, 1
OK_TRAILERS = _literal(b"grpc-status", b"0")
ANSWERS = {  # mode → (DATA payload, END_STREAM on it, trailers)
    "flag": (b"\xff\x00\x00\x00\x03abc", False, OK_TRAILERS),
    "compressed": (b"\x01\x00\x00\x00\x03abc", False, OK_TRAILERS),
    "short": (b"\x00\x00\x00\x10\x00abc", True, None),
    "status13": (None, False, _literal(b"grpc-status", b"13") + _literal(b"grpc-message", b"boom")),
    "notrailers": (b"\x00\x00\x00\x00\x00", False, None),
    "notrailers-task": (b"\x00\x00\x00\x00\x05\x0a\x03t-1", False, None),
}


class GarbageGrpc:
    def __init__(self, mode: str) -> None:
        self.data, self.ends, self.trailers = ANSWERS[mode]
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.url = ""

    def __enter__(self) -> GarbageGrpc:
        self.thread.start()
        assert self.ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        self.ready.set()
        self.loop.run_forever()
        server.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readexactly(24)  # the client's preface
            writer.write(_frame(SETTINGS, 0, 0, b""))
            while True:
                head = await reader.readexactly(9)
                kind, flags = head[3], head[4]
                stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
                await reader.readexactly(int.from_bytes(head[:3], "big"))
                if kind == SETTINGS and not flags & ACK:
                    writer.write(_frame(SETTINGS, ACK, 0, b""))
                if stream and kind in (DATA, HEADERS_FRAME) and flags & END_STREAM:  # the request is whole
                    self._answer(writer, stream)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    def _answer(self, writer: asyncio.StreamWriter, stream: int) -> None:
        writer.write(_frame(HEADERS_FRAME, END_HEADERS, stream, HEADERS))
        if self.data is not None:
            writer.write(_frame(DATA, END_STREAM if self.ends else 0, stream, self.data))
        if self.trailers is not None:
            writer.write(_frame(HEADERS_FRAME, END_HEADERS | END_STREAM, stream, self.trailers))
