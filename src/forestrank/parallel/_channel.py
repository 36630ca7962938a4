"""A direct TCP channel from the driver to one object on a Dask worker, for rounds of calls.

A Dask actor call crosses the client's event loop, the worker's event loop and the
actor's executor thread each way; on one machine that costs about 2.5 ms a call with
nothing to carry, and about 1 GB/s less than the socket can move for the histograms a
boosting round brings back (``benchmarks/RESULTS.md``, "Boosting on a cluster"). A
channel is one socket per worker that the driver writes a method's name and arguments
to and reads its answer from; a thread on the worker reads the request, calls the
method and writes the answer. LightGBM's and XGBoost's cluster learners talk over
sockets of their own the same way (their collectives); the channel keeps Dask for
placing the data, starting the objects and telling a lost worker from a failed call.

Messages are pickled with protocol 5, arrays as out-of-band buffers sent as they are
(no copy into the pickle) and received straight into the arrays' memory. The worker
accepts one connection, and only after it has sent the random token the driver got
through Dask (``serve``): the socket takes pickles from no one who could not already
submit work to the cluster.
"""

import hmac
import pickle
import secrets
import select
import socket
import struct
import threading
from collections.abc import Callable

# How long a worker waits for the driver to connect, and the driver for the connection.
CONNECT_TIMEOUT = 30.0
# How often a driver waiting for an answer asks whether the worker is still there: a
# worker cut off by the network closes no socket.
LIVENESS_INTERVAL = 5.0

_TOKEN_BYTES = 32
_COUNT = struct.Struct("<Q")


class ChannelClosed(ConnectionError):
    """The other end closed the channel (its process or thread is gone)."""


def serve(target: object, host: str) -> tuple[str, int, bytes]:
    """Answer the requests of one driver to ``target`` over a socket, from a daemon thread.

    Parameters
    ----------
    target : object
        Whose methods the requests name.
    host : str
        The interface to listen on: the worker's own, which the driver already reaches.

    Returns
    -------
    host, port, token : str, int, bytes
        Where to connect and the token the connection must send first (``Channel``).
    """
    listener = socket.create_server((host, 0), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    listener.settimeout(CONNECT_TIMEOUT)
    token = secrets.token_bytes(_TOKEN_BYTES)
    threading.Thread(target=_answer_requests, args=(target, listener, token), daemon=True, name="forestrank-channel").start()
    return host, listener.getsockname()[1], token


def serve_on_worker(target: object) -> tuple[str, int, bytes] | None:
    """``serve(target)`` on the Dask worker running this call, on the worker's own host; None where
    its comm is not plain TCP (TLS would be bypassed; UCX and in-process workers have no
    such host) or that host cannot be listened on."""
    from distributed import get_worker
    from distributed.comm import get_address_host, parse_address

    address = get_worker().address
    if parse_address(address)[0] != "tcp":
        return None
    try:
        return serve(target, get_address_host(address))
    except OSError:
        return None


def _answer_requests(target: object, listener: socket.socket, token: bytes) -> None:
    """The thread of ``serve``: accept the connection that sends ``token``, then answer its
    requests (``(method, arguments)``) with ``(True, result)`` or ``(False, error)`` until
    it closes; connections with another token are closed unanswered."""
    with listener:
        connection = _accept(listener, token)
    if connection is None:
        return
    with connection:
        while True:
            try:
                method, arguments = receive_message(connection)
            except OSError:
                return
            try:
                answer = (True, getattr(target, method)(*arguments))
            except Exception as error:  # the method's own error, raised again on the driver
                answer = (False, error)
            try:
                frames = _frames(answer)
            except Exception as error:
                frames = _frames((False, RuntimeError(f"the answer of {method!r} could not be pickled on the worker: {error!r}")))
            try:
                _send_frames(connection, frames)
            except OSError:
                return


def _accept(listener: socket.socket, token: bytes) -> socket.socket | None:
    """The first connection to ``listener`` that sends ``token``, or None on timeout."""
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return None
        connection.settimeout(CONNECT_TIMEOUT)
        try:
            sent = _receive_exactly(connection, _TOKEN_BYTES)
        except OSError:
            sent = b""
        if hmac.compare_digest(bytes(sent), token):
            connection.settimeout(None)
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return connection
        connection.close()


class Channel:
    """The driver's end of a channel to an object ``serve`` answers for.

    Parameters
    ----------
    address : (str, int, bytes)
        ``serve``'s answer.

    Raises
    ------
    OSError
        The worker cannot be reached at that address.
    """

    def __init__(self, address: tuple[str, int, bytes]) -> None:
        host, port, token = address
        self.socket = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.socket.sendall(token)
        self.socket.settimeout(None)

    def ask(self, method: str, arguments: tuple) -> None:
        """Send the request ``method(*arguments)``; its answer is the next ``answer``."""
        send_message(self.socket, (method, arguments))

    def answer(self, alive: Callable[[], bool] | None = None) -> object:
        """The answer to the oldest request not answered yet; the method's error is raised here.

        Parameters
        ----------
        alive : callable, optional
            Asked every ``LIVENESS_INTERVAL`` seconds while no answer has come: False
            means the worker is gone, and the wait ends.

        Raises
        ------
        ChannelClosed, OSError
            The channel broke, or ``alive`` said the worker is gone.
        """
        if alive is not None:
            while not select.select([self.socket], [], [], LIVENESS_INTERVAL)[0]:
                if not alive():
                    raise ChannelClosed("the worker is gone (no longer in the cluster) and did not answer")
        ok, result = receive_message(self.socket)
        if not ok:
            raise result
        return result

    def close(self) -> None:
        self.socket.close()


def send_message(connection: socket.socket, message: object) -> None:
    """Write ``message``: the number of frames, their sizes, the pickle and its out-of-band buffers."""
    _send_frames(connection, _frames(message))


def _frames(message: object) -> list:
    """``message`` pickled (protocol 5): the pickle, then the buffers of its contiguous arrays."""
    buffers: list = []
    head = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
    return [memoryview(head)] + [buffer.raw() for buffer in buffers]


def _send_frames(connection: socket.socket, frames: list) -> None:
    sizes = struct.pack(f"<{len(frames) + 1}Q", len(frames), *(frame.nbytes for frame in frames))
    connection.sendall(sizes + frames[0])
    for frame in frames[1:]:
        connection.sendall(frame)


def receive_message(connection: socket.socket) -> object:
    """Read one ``send_message``; the arrays are built on the received buffers (writable)."""
    (n_frames,) = _COUNT.unpack(_receive_exactly(connection, _COUNT.size))
    sizes = struct.unpack(f"<{n_frames}Q", _receive_exactly(connection, 8 * n_frames))
    frames = [_receive_exactly(connection, size) for size in sizes]
    return pickle.loads(frames[0], buffers=frames[1:])


def _receive_exactly(connection: socket.socket, size: int) -> bytearray:
    buffer = bytearray(size)
    view = memoryview(buffer)
    received = 0
    while received < size:
        count = connection.recv_into(view[received:], size - received)
        if count == 0:
            raise ChannelClosed("the channel was closed by the other end")
        received += count
    return buffer
