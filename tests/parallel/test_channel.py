"""The direct channel to an object on a worker (``parallel/_channel.py``), served from a thread of this process."""

import socket
import threading
import time

import numpy as np
import pytest

from forestrank.parallel import _channel
from forestrank.parallel._channel import Channel, ChannelClosed, serve


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

    def unpicklable(self):
        return lambda: None

    def wait(self):
        self.release.wait(30)
        return "released"


def channel_threads():
    return [thread for thread in threading.enumerate() if thread.name == "forestrank-channel"]


@pytest.fixture
def target_and_channel():
    before = set(channel_threads())
    target = Target()
    channel = Channel(serve(target, "127.0.0.1"))
    yield target, channel
    channel.close()
    target.release.set()
    for thread in set(channel_threads()) - before:  # closing the channel ends its thread
        thread.join(10)
        assert not thread.is_alive()


def test_arrays_and_objects_arrive_equal_and_writable(target_and_channel):
    _, channel = target_and_channel
    strided = np.arange(60.0).reshape(6, 10)[:, ::3]  # not contiguous: pickled in band
    nodes = np.zeros(4, dtype=[("feature", np.int64), ("threshold", np.float64)])
    sent = (np.linspace(-1, 1, 7), strided, nodes, {"weights": np.ones(3, dtype=np.float32)}, None, 3, "name")
    channel.ask("echo", sent)
    received = channel.answer()
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
        got = channel.answer()
        np.testing.assert_array_equal(got, np.arange(136 * 256 * 3, dtype=dtype).reshape(136, 256, 3))
        got += 1  # the received buffer is the array's own memory, writable


def test_an_error_of_the_method_is_raised_on_the_driver_and_the_channel_goes_on(target_and_channel):
    target, channel = target_and_channel
    channel.ask("fail", ())
    with pytest.raises(KeyError, match="no such node"):
        channel.answer()
    channel.ask("unpicklable", ())
    with pytest.raises(RuntimeError, match="'unpicklable'"):
        channel.answer()
    channel.ask("no_such_method", ())
    with pytest.raises(AttributeError):
        channel.answer()
    channel.ask("echo", (1,))
    assert channel.answer() == (1,)
    assert target.calls == ["echo"]


def test_requests_are_answered_in_order(target_and_channel):
    _, channel = target_and_channel
    for value in range(5):
        channel.ask("echo", (value,))
    assert [channel.answer() for _ in range(5)] == [(value,) for value in range(5)]


def test_a_connection_without_the_token_is_closed_unanswered():
    target = Target()
    host, port, token = serve(target, "127.0.0.1")
    with socket.create_connection((host, port), timeout=10) as intruder:
        intruder.sendall(bytes(len(token)))
        intruder.sendall(b"anything")
        try:
            assert intruder.recv(1) == b""  # closed by the worker, nothing read as a request
        except ConnectionResetError:  # closed with the request unread
            pass
    channel = Channel((host, port, token))  # the driver still gets in
    channel.ask("echo", ("after",))
    assert channel.answer() == ("after",)
    channel.close()
    assert target.calls == ["echo"]


def test_a_gone_worker_ends_the_wait(target_and_channel, monkeypatch):
    _, channel = target_and_channel
    monkeypatch.setattr(_channel, "LIVENESS_INTERVAL", 0.05)
    asked = []

    def alive():
        asked.append(time.monotonic())
        return len(asked) < 3

    channel.ask("wait", ())
    with pytest.raises(ChannelClosed, match="gone"):
        channel.answer(alive)
    assert len(asked) == 3


def test_an_answer_comes_while_the_worker_is_there(target_and_channel, monkeypatch):
    target, channel = target_and_channel
    monkeypatch.setattr(_channel, "LIVENESS_INTERVAL", 0.05)
    asked = []

    def alive():
        asked.append(1)
        if len(asked) == 3:
            target.release.set()
        return True

    channel.ask("wait", ())
    assert channel.answer(alive) == "released"
    assert len(asked) >= 3


def test_a_closed_worker_end_is_an_os_error():
    target = Target()
    host, port, token = serve(target, "127.0.0.1")
    channel = Channel((host, port, token))
    channel.ask("echo", (1,))
    assert channel.answer() == (1,)
    [thread] = [thread for thread in channel_threads() if thread.is_alive()][-1:]
    channel.socket.shutdown(socket.SHUT_WR)  # the worker reads the end and closes its side
    thread.join(10)
    with pytest.raises(OSError):
        channel.ask("echo", (2,))
        channel.answer()
    channel.close()
