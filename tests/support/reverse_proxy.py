"""A small authenticating reverse proxy for the sign-in tests (no tests here), as oauth2-proxy behaves.

It accepts HTTP/1.1 on 127.0.0.1, strips the identity headers a client sent, adds its own (the user it has
"authenticated"), and forwards every request to the upstream from a chosen source address (say 127.0.0.2,
a loopback address the dashboard is told to trust). A websocket upgrade is forwarded the same way, then
both directions are piped byte for byte. Independent of Streamlit: asyncio streams, one thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

MAX_HEAD_BYTES = 64 * 1024


@dataclass
class ReverseProxy:
    upstream: tuple[str, int]
    source_address: str  # the address the proxy connects to the upstream from
    headers: dict[str, str]  # added to every request (after removing any copy the client sent)
    port: int = 0
    requests: list[str] = field(default_factory=list)  # request lines seen, for the test's assertions

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _handle(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(
                *self.upstream, local_addr=(self.source_address, 0)
            )
        except OSError:
            client_writer.close()
            return
        responses = asyncio.create_task(self._pipe(upstream_reader, client_writer))
        try:
            while True:
                head = await client_reader.readuntil(b"\r\n\r\n")
                if len(head) > MAX_HEAD_BYTES:
                    break
                request, length, upgrade = self._rewrite(head)
                upstream_writer.write(request)
                if length:
                    upstream_writer.write(await client_reader.readexactly(length))
                await upstream_writer.drain()
                if upgrade:  # a websocket: from now on frames, not requests
                    await self._pipe(client_reader, upstream_writer)
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            with contextlib.suppress(Exception):
                upstream_writer.close()
            await asyncio.gather(responses, return_exceptions=True)
            with contextlib.suppress(Exception):
                client_writer.close()

    def _rewrite(self, head: bytes) -> tuple[bytes, int, bool]:
        lines = head.decode("latin-1").split("\r\n")
        request_line, header_lines = lines[0], [line for line in lines[1:] if line]
        self.requests.append(request_line)
        ours = {name.lower() for name in self.headers}
        kept = [line for line in header_lines if line.split(":", 1)[0].strip().lower() not in ours]
        values = {line.split(":", 1)[0].strip().lower(): line.split(":", 1)[1].strip() for line in kept if ":" in line}
        kept += [f"{name}: {value}" for name, value in self.headers.items()]
        length = int(values.get("content-length", "0") or 0)
        upgrade = values.get("upgrade", "").lower() == "websocket"
        return ("\r\n".join([request_line, *kept]) + "\r\n\r\n").encode("latin-1"), length, upgrade

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.CancelledError):
            while chunk := await reader.read(65536):
                writer.write(chunk)
                await writer.drain()
        with contextlib.suppress(Exception):
            writer.close()


@contextlib.contextmanager
def reverse_proxy(upstream: tuple[str, int], source_address: str, headers: dict[str, str]) -> Iterator[ReverseProxy]:
    """The proxy, listening on 127.0.0.1 (a free port) on a thread of its own until the block ends."""
    proxy = ReverseProxy(upstream, source_address, headers)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    stop: asyncio.Event | None = None

    async def serve() -> None:
        nonlocal stop
        stop = asyncio.Event()
        server = await asyncio.start_server(proxy._handle, "127.0.0.1", 0, limit=MAX_HEAD_BYTES)
        proxy.port = server.sockets[0].getsockname()[1]
        started.set()
        async with server:
            await stop.wait()
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in others:  # the connections still open (a websocket): closed with the proxy
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    if not started.wait(10):
        raise RuntimeError("the reverse proxy did not start")
    try:
        yield proxy
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        if not thread.is_alive():
            loop.close()
