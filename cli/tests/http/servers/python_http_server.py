"""The Python SDK server of the stdio tests (../../servers/python_server.py,
the same tools), served over Streamable HTTP: the upstream of the HTTP mode's
tests. Stateless, answering in JSON bodies; with the argument `stateful`, with
sessions, answering in event streams.

It listens on 127.0.0.1 on a port the system picks, and prints
`listening on 127.0.0.1:PORT` on stderr once it accepts connections.
"""

import asyncio
import pathlib
import socket
import sys

import uvicorn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "servers"))
from python_server import server  # noqa: E402


class Announcing(uvicorn.Server):
    """Says where it listens once it does."""

    def __init__(self, config, address):
        super().__init__(config)
        self.address = address

    async def startup(self, sockets=None):
        await super().startup(sockets=sockets)
        print(f"listening on {self.address}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    # IPPROTO_TCP named, as uvicorn's own listener has it: asyncio sets
    # TCP_NODELAY only on sockets that say they are TCP, and without it an
    # answer written in two pieces waits for the client's delayed ACK (40 ms)
    # on a kept-alive connection.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.bind(("127.0.0.1", 0))
    host, port = listener.getsockname()
    stateful = sys.argv[1:] == ["stateful"]
    app = server.streamable_http_app(
        json_response=not stateful, stateless_http=not stateful, host=host
    )
    config = uvicorn.Config(app, log_level="warning")
    asyncio.run(Announcing(config, f"{host}:{port}").serve(sockets=[listener]))
