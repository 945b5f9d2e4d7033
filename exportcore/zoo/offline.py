"""Keep a zoo builder off the network: any socket connect raises, and the attempt is recorded.

Builders use random weights, yet some libraries download by default (a torchvision detection
model's backbone weights, a HF config that names a pretrained backbone). An attempt becomes a
``NetworkAttempt`` naming where it went, so the model is skipped with that reason instead of
silently downloading (or hanging) in CI.
"""

from __future__ import annotations

import contextlib
import socket
from typing import Any, Iterator

__all__ = ["NetworkAttempt", "no_network"]


class NetworkAttempt(ConnectionError):
    """A zoo builder tried to open a network connection."""


@contextlib.contextmanager
def no_network(attempts: list[str] | None = None) -> Iterator[list[str]]:
    """Refuse every socket connection inside the block; yield the list of attempted addresses.

    The list is the caller's (``attempts``, or a new one): what one block refused is that block's to
    report, never a process-wide record.
    """
    seen = attempts if attempts is not None else []
    originals = (socket.socket.connect, socket.socket.connect_ex, socket.create_connection, socket.getaddrinfo)

    def refused(where: str, what: str) -> NetworkAttempt:
        seen.append(where)
        return NetworkAttempt(what)

    def refuse(_self: Any, address: Any, *_: Any) -> Any:
        raise refused(_where(address), f"tried to open a network connection to {_where(address)}")

    def refuse_create(address: Any, *_: Any, **__: Any) -> Any:
        raise refused(_where(address), f"tried to open a network connection to {_where(address)}")

    def refuse_lookup(host: Any, port: Any, *_: Any, **__: Any) -> Any:
        # A name lookup comes first, and offline it can block for its whole timeout.
        raise refused(_where((host, port)), f"tried to look up {host} on the network")

    socket.socket.connect = refuse  # type: ignore[method-assign]
    socket.socket.connect_ex = refuse  # type: ignore[method-assign]
    socket.create_connection = refuse_create  # type: ignore[assignment]
    socket.getaddrinfo = refuse_lookup  # type: ignore[assignment]
    try:
        yield seen
    finally:
        (socket.socket.connect, socket.socket.connect_ex, socket.create_connection,  # type: ignore[method-assign]
         socket.getaddrinfo) = originals


def _where(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address)
