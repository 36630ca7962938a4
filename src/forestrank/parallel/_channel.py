"""A direct TCP channel from the driver to one object on a Dask worker, for rounds of calls.

A Dask actor call crosses the client's event loop, the worker's event loop and the
actor's executor thread each way, which costs more per round, and moves histograms more
slowly, than a plain socket (measured in ``benchmarks/RESULTS.md``, "Boosting on a
cluster"). A channel is one socket per worker that the driver writes a method's name
and arguments to and reads its answer from; a thread on the worker reads the request,
calls the method and writes the answer, one request at a time. Dask still places the
data, starts the objects, hands the driver each channel's address and token, and tells
a lost worker from a failed call.

Messages are pickled with protocol 5, arrays as out-of-band buffers sent as they are
(no copy into the pickle) and received straight into the arrays' memory.

Security: the worker serves only the first connection that sends the random token the
driver received through Dask, and tells it so with one byte; other connections are
closed unanswered, and the listener closes once the driver is in or after
``CONNECT_TIMEOUT``. The token and the pickles travel unencrypted, so the channel
protects no more than Dask's own plain-TCP comm, which also runs any pickle it is sent;
``serve_on_worker`` opens no channel on a TLS cluster.
"""

import hmac
import pickle
import secrets
import socket
import struct
import threading
import time
import traceback
from collections.abc import Callable

# How long a worker waits for the driver to connect, and the driver for the connection.
CONNECT_TIMEOUT = 30.0
# How long the worker waits for a connection's token.
TOKEN_TIMEOUT = 5.0
# How often a driver waiting on a worker asks whether it is still there: a worker cut off
# by the network closes no socket.
LIVENESS_INTERVAL = 5.0
# A driver cut off by the network closes no socket either: the worker's end probes the
# connection after this many idle seconds (TCP keepalive), every 10 s, 6 times. A worker
# blocked sending to such a driver waits for TCP's retransmissions to give up instead.
KEEPALIVE_IDLE = 60

_TOKEN_BYTES = 32
_ADMITTED = b"\x01"
_COUNT = struct.Struct("<Q")


class ChannelClosed(ConnectionError):
    """The other end closed the channel or is gone (its process, thread or network)."""


def serve(target: object, host: str) -> tuple[str, int, bytes]:
    """Answer the requests of one driver to ``target`` over a socket, from a daemon thread.

    Parameters
    ----------
    target : object
        Whose public methods the requests name.
    host : str
        The interface to listen on: the worker's own, which the driver already reaches.

    Returns
    -------
    host, port, token : str, int, bytes
        Where to connect and the token the connection must send first (``Channel``).

    Raises
    ------
    OSError
        ``host`` cannot be listened on.
    """
    family = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)[0][0]
    listener = socket.create_server((host, 0), family=family)
    token = secrets.token_bytes(_TOKEN_BYTES)
    threading.Thread(target=_answer_requests, args=(target, listener, token), daemon=True, name="forestrank-channel").start()
    return host, listener.getsockname()[1], token


def serve_on_worker(target: object) -> tuple[str, int, bytes] | None:
    """``serve`` ``target`` on the host of the Dask worker running this call.

    Returns
    -------
    (host, port, token) or None
        None where the worker's comm is not plain TCP (TLS would be bypassed; UCX and
        in-process workers have no such host) or its host cannot be listened on.
    """
    from distributed import get_worker
    from distributed.comm import get_address_host, parse_address

    address = get_worker().address
    try:
        if parse_address(address)[0] != "tcp":
            return None
        return serve(target, get_address_host(address))
    except (OSError, ValueError):
        return None


def _answer_requests(target: object, listener: socket.socket, token: bytes) -> None:
    """The thread of ``serve``: admit the connection that sends ``token``, then answer its
    requests (``(method, arguments)``) with ``(True, result)`` or ``(False, error)`` until
    it closes or breaks."""
    with listener:
        connection = _admit(listener, token)
    if connection is None:
        return
    with connection:
        while True:
            try:
                frames = _receive_frames(connection)
            except OSError:
                return
            try:
                method, arguments = pickle.loads(frames[0], buffers=frames[1:])
                if method.startswith("_"):
                    raise AttributeError(f"the channel calls public methods only, not {method!r}")
                answer = (True, getattr(target, method)(*arguments))
            except Exception as error:  # the request's or the method's error, raised again on the driver
                if hasattr(error, "add_note"):  # Python 3.11+
                    error.add_note(f"on the worker:\n{traceback.format_exc()}")
                answer = (False, error)
            try:
                reply = _frames(answer)
            except Exception as error:
                reply = _frames((False, RuntimeError(f"the answer could not be pickled on the worker: {error!r}")))
            try:
                _send_frames(connection, reply)
            except OSError:
                return


def _admit(listener: socket.socket, token: bytes) -> socket.socket | None:
    """The first connection to ``listener`` that sends ``token`` within ``CONNECT_TIMEOUT`` of
    the start, told so with one byte; None when none did."""
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while (remaining := deadline - time.monotonic()) > 0:
        listener.settimeout(remaining)
        try:
            connection, _ = listener.accept()
        except OSError:
            return None
        # A connection that sends nothing (a port scanner) holds the driver up this long at most.
        connection.settimeout(max(min(deadline - time.monotonic(), TOKEN_TIMEOUT), 0.001))
        try:
            admitted = hmac.compare_digest(bytes(_receive_exactly(connection, _TOKEN_BYTES)), token)
            if admitted:
                connection.sendall(_ADMITTED)
                connection.settimeout(None)
                connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                _keep_alive(connection)
        except OSError:
            admitted = False
        if admitted:
            return connection
        connection.close()
    return None


def _keep_alive(connection: socket.socket) -> None:
    """Probe an idle ``connection`` so that a peer gone without closing it breaks it (where the
    platform has the options)."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for option, value in (("TCP_KEEPIDLE", KEEPALIVE_IDLE), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 6)):
        if hasattr(socket, option):
            connection.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), value)


class Channel:
    """The driver's end of a channel to an object ``serve`` answers for: one request at a
    time, ``ask`` then ``reply``.

    Parameters
    ----------
    address : (str, int, bytes)
        ``serve``'s answer.
    alive : callable, optional
        Asked every ``LIVENESS_INTERVAL`` seconds while a send or a reply waits on the
        worker: False means the worker is gone, and the wait ends with ``ChannelClosed``.

    Attributes
    ----------
    socket : socket.socket
        Connected to the worker's thread, with a timeout of ``LIVENESS_INTERVAL``.

    Raises
    ------
    OSError
        The worker cannot be reached at that address, or did not admit the connection.
    """

    def __init__(self, address: tuple[str, int, bytes], alive: Callable[[], bool] | None = None) -> None:
        host, port, token = address
        self.alive = alive
        self.socket = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT)
        try:
            self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.socket.sendall(token)
            if bytes(_receive_exactly(self.socket, len(_ADMITTED))) != _ADMITTED:
                raise ChannelClosed("the worker did not admit the channel")
            self.socket.settimeout(LIVENESS_INTERVAL)
        except BaseException:
            self.socket.close()
            raise

    def ask(self, method: str, arguments: tuple) -> None:
        """Send the request ``method(*arguments)``; its answer is the next ``reply``.

        Raises
        ------
        ChannelClosed, OSError
            The channel broke, or the worker is gone.
        """
        _send_frames(self.socket, _frames((method, arguments)), self.alive)

    def reply(self) -> tuple[bool, object]:
        """The answer to the request asked: ``(True, result)``, or ``(False, error)`` where the
        method (or reading the request) raised ``error`` on the worker.

        Raises
        ------
        ChannelClosed, OSError
            The channel broke, or the worker is gone.
        """
        frames = _receive_frames(self.socket, self.alive)
        return pickle.loads(frames[0], buffers=frames[1:])

    def close(self) -> None:
        self.socket.close()


def _frames(message: object) -> list:
    """``message`` pickled (protocol 5): the pickle, then the buffers of its contiguous arrays."""
    buffers: list = []
    head = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
    return [memoryview(head)] + [buffer.raw() for buffer in buffers]


def _send_frames(connection: socket.socket, frames: list, alive: Callable[[], bool] | None = None) -> None:
    """Write the number of frames, their sizes and the frames."""
    sizes = struct.pack(f"<{len(frames) + 1}Q", len(frames), *(frame.nbytes for frame in frames))
    for data in (memoryview(sizes + frames[0]), *frames[1:]):
        data = data.cast("B")
        sent = 0
        while sent < len(data):
            try:
                sent += connection.send(data[sent:])
            except TimeoutError:
                _check(alive)


def _receive_frames(connection: socket.socket, alive: Callable[[], bool] | None = None) -> list:
    """Read one ``_send_frames``: the frames, each in a buffer of its own (writable)."""
    (n_frames,) = _COUNT.unpack(_receive_exactly(connection, _COUNT.size, alive))
    sizes = struct.unpack(f"<{n_frames}Q", _receive_exactly(connection, 8 * n_frames, alive))
    return [_receive_exactly(connection, size, alive) for size in sizes]


def _receive_exactly(connection: socket.socket, size: int, alive: Callable[[], bool] | None = None) -> bytearray:
    buffer = bytearray(size)
    view = memoryview(buffer)
    received = 0
    while received < size:
        try:
            count = connection.recv_into(view[received:], size - received)
        except TimeoutError:
            _check(alive)
            continue
        if count == 0:
            raise ChannelClosed("the channel was closed by the other end")
        received += count
    return buffer


def _check(alive: Callable[[], bool] | None) -> None:
    """After a wait on the socket timed out: go on waiting, unless ``alive`` says the worker is gone
    (without ``alive`` the timeout is the socket's own limit, and it ends the wait)."""
    if alive is None:
        raise ChannelClosed("the other end did not answer in time")
    if not alive():
        raise ChannelClosed("the worker is gone (no longer in the cluster) and did not answer")
