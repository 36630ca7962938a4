"""The direct channel to an object on a worker (``parallel/_channel.py``), served from a thread of this process."""

import pickle
import socket
import threading

import numpy as np
import pytest

from forestrank.parallel import _channel
from forestrank.parallel._channel import Channel, ChannelClosed, serve


def answer(channel):
    """The result of the request asked over ``channel``; the worker's error is raised here."""
    ok, result = channel.reply()
    if not ok:
        raise result
    return result


def _refuse_to_unpickle():
    raise pickle.UnpicklingError("written by another version")


class Unreadable:
    """Pickles, but cannot be unpickled: a request the worker cannot read."""

    def __reduce__(self):
        return _refuse_to_unpickle, ()


class Target:
    def __init__(self):
        self.calls = []
        self.release = threading.Event()

    def echo(self, *values):
        self.calls.append("echo")
        return values

    def histograms(self, shape, dtype):
        return np.arange(np.prod(shape), dtype=dtype).reshape(shape)

    def fail(self):
        raise KeyError("no such node")

    def fail_with_os_error(self):
        raise FileNotFoundError("a file of the method's own")

    def unpicklable(self):
        return lambda: None

    def wait(self):
        self.release.wait(30)
        return "released"

    def _private(self):
        self.calls.append("private")


def channel_threads():
    return {thread for thread in threading.enumerate() if thread.name == "forestrank-channel"}


@pytest.fixture
def served():
    """A target served from a thread, and the thread; on teardown the thread must have ended."""
    before = channel_threads()
    target = Target()
    address = serve(target, "127.0.0.1")
    [thread] = channel_threads() - before
    yield target, address, thread
    target.release.set()
    thread.join(10)
    assert not thread.is_alive()


@pytest.fixture
def target_and_channel(served):
    target, address, thread = served
    channel = Channel(address)
    yield target, channel
    channel.close()  # ends the thread (checked by ``served``)


def test_arrays_and_objects_arrive_equal_and_writable(target_and_channel):
    _, channel = target_and_channel
    strided = np.arange(60.0).reshape(6, 10)[:, ::3]  # not contiguous: pickled in band
    nodes = np.zeros(4, dtype=[("feature", np.int64), ("threshold", np.float64)])
    sent = (np.linspace(-1, 1, 7), strided, nodes, {"weights": np.ones(3, dtype=np.float32)}, None, 3, "name")
    channel.ask("echo", sent)
    received = answer(channel)
    assert len(received) == len(sent)
    for got, expected in zip(received, sent):
        if isinstance(expected, np.ndarray):
            np.testing.assert_array_equal(got, expected)
            assert got.dtype == expected.dtype and got.flags.writeable
        elif isinstance(expected, dict):
            np.testing.assert_array_equal(got["weights"], expected["weights"])
        else:
            assert got == expected


def test_a_round_of_histograms_is_the_array_the_method_returned(target_and_channel):
    _, channel = target_and_channel
    for dtype in (np.float64, np.int32):
        channel.ask("histograms", ((136, 256, 3), dtype))
        got = answer(channel)
        np.testing.assert_array_equal(got, np.arange(136 * 256 * 3, dtype=dtype).reshape(136, 256, 3))
        got += 1  # the received buffer is the array's own memory, writable


def test_arrays_travel_as_frames_of_their_own():
    array = np.arange(1000.0)
    frames = _channel._frames(("histograms", (array, array[::2])))
    assert [frame.nbytes for frame in frames[1:]] == [8000]  # the contiguous one out of band, uncopied
    assert np.shares_memory(np.frombuffer(frames[1], dtype=np.float64), array)


def test_an_error_on_the_worker_is_its_reply_and_the_channel_goes_on(target_and_channel):
    target, channel = target_and_channel
    channel.ask("fail", ())
    with pytest.raises(KeyError, match="no such node") as raised:
        answer(channel)
    assert any("on the worker" in note and 'raise KeyError("no such node")' in note for note in raised.value.__notes__)
    channel.ask("fail_with_os_error", ())
    ok, error = channel.reply()  # the method's own OSError is a reply, not a broken channel
    assert not ok and isinstance(error, FileNotFoundError)
    channel.ask("unpicklable", ())
    with pytest.raises(RuntimeError, match="could not be pickled"):
        answer(channel)
    channel.ask("echo", (Unreadable(),))
    with pytest.raises(pickle.UnpicklingError, match="another version"):
        answer(channel)
    for method in ("no_such_method", "_private", "__init__"):
        channel.ask(method, ())
        with pytest.raises(AttributeError):
            answer(channel)
    channel.ask("echo", (1,))
    assert answer(channel) == (1,)
    assert target.calls == ["echo"]


def test_a_connection_without_the_token_is_closed_unanswered(served):
    target, (host, port, token), _ = served
    with socket.create_connection((host, port), timeout=10) as intruder:
        intruder.sendall(bytes(len(token)))
        intruder.sendall(pickle.dumps(("echo", ("intruder",))))
        try:
            assert intruder.recv(1) == b""  # closed by the worker: not admitted, nothing read as a request
        except ConnectionResetError:  # closed with the request unread
            pass
    channel = Channel((host, port, token))  # the driver still gets in
    channel.ask("echo", ("after",))
    assert answer(channel) == ("after",)
    channel.close()
    assert target.calls == ["echo"]


def test_a_driver_that_never_connects_leaves_no_listener(monkeypatch):
    monkeypatch.setattr(_channel, "CONNECT_TIMEOUT", 0.2)
    before = channel_threads()
    host, port, token = serve(Target(), "127.0.0.1")
    [thread] = channel_threads() - before
    thread.join(10)
    assert not thread.is_alive()
    with pytest.raises(OSError):
        Channel((host, port, token))


def test_a_wrong_token_is_not_admitted(served):
    _, (host, port, token), _ = served
    with pytest.raises(ChannelClosed):
        Channel((host, port, bytes(reversed(token))))
    Channel((host, port, token)).close()  # the right one still is


def test_a_gone_worker_ends_the_wait(target_and_channel):
    _, channel = target_and_channel
    asked = []

    def alive():
        asked.append(1)
        return len(asked) < 3

    channel.alive = alive
    channel.socket.settimeout(0.05)  # LIVENESS_INTERVAL, short
    channel.ask("wait", ())
    with pytest.raises(ChannelClosed, match="gone"):
        channel.reply()
    assert len(asked) == 3


def test_an_answer_comes_while_the_worker_is_there(target_and_channel):
    target, channel = target_and_channel
    asked = []

    def alive():
        asked.append(1)
        if len(asked) == 3:
            target.release.set()
        return True

    channel.alive = alive
    channel.socket.settimeout(0.05)
    channel.ask("wait", ())
    assert answer(channel) == "released"
    assert len(asked) >= 3


def test_a_send_to_a_worker_that_stopped_reading_ends_once_it_is_gone():
    listener = socket.create_server(("127.0.0.1", 0))
    stalled = []

    def admit_then_read_nothing():
        connection, _ = listener.accept()
        connection.recv(32, socket.MSG_WAITALL)
        connection.sendall(_channel._ADMITTED)
        stalled.append(connection)

    thread = threading.Thread(target=admit_then_read_nothing)
    thread.start()
    channel = Channel(("127.0.0.1", listener.getsockname()[1], bytes(32)))
    thread.join(10)
    asked = []

    def alive():
        asked.append(1)
        return len(asked) < 3

    channel.alive = alive
    channel.socket.settimeout(0.05)
    with pytest.raises(ChannelClosed, match="gone"):
        channel.ask("echo", (np.ones(8_000_000),))  # 64 MB: more than the sockets hold unread
    assert len(asked) == 3
    channel.close()
    stalled[0].close()
    listener.close()


def test_a_closed_worker_end_is_channel_closed(served):
    _, address, thread = served
    channel = Channel(address)
    channel.ask("echo", (1,))
    assert answer(channel) == (1,)
    channel.socket.shutdown(socket.SHUT_WR)  # the worker reads the end of its requests and closes its side
    thread.join(10)
    assert not thread.is_alive()
    with pytest.raises(ChannelClosed):
        channel.reply()
    channel.close()


def test_an_ipv6_host_is_served():
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    target = Target()
    try:
        address = serve(target, "::1")
    except OSError:
        pytest.skip("::1 cannot be listened on here")
    channel = Channel(address)
    channel.ask("echo", ("v6",))
    assert answer(channel) == ("v6",)
    channel.close()
