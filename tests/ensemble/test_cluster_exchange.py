"""A tree grown over partitions held by Dask actors (``ensemble/_cluster_exchange.py``) against the
same tree grown in memory (``tests/tree/test_remote.py`` grows it over partitions in one process)."""

import dataclasses
import socket
import time

import numpy as np
import pytest

from cluster_helpers import PARAMS, assert_same_tree, boosting_problem
from forestrank._tree import _criteria, _rng
from forestrank._tree._grow import TrainingSet, grow_tree, histogram_pool, max_nodes
from forestrank._tree._remote import PartitionsExchange
from forestrank.ensemble import _cluster_exchange
from forestrank.ensemble._cluster_exchange import ActorRounds, ChannelBroken, LostPartitionsError, start_actors

pytestmark = pytest.mark.slow  # a LocalCluster of worker processes: run after the quick suite (.ci/run)

distributed = pytest.importorskip("distributed", reason="the dask backend needs forestrank[dask]")


def grow_on_actors(client, binned, targets, weights, bounds, dtype, direct=True):
    """The tree grown over actors holding the partitions ``bounds``, its rows' leaves, and the rounds
    (over channels to the actors, or, not ``direct``, as Dask actor calls)."""
    data = TrainingSet(**binned, targets=targets, leaf_targets=np.zeros(0))
    n_rows = int((weights > 0).sum())
    client.wait_for_workers(1)  # a worker the shared cluster restarted must be back before the rows are placed
    workers = list(client.scheduler_info()["workers"])
    parts = list(zip(bounds[:-1], bounds[1:]))
    # hash=False: the same rows scattered by the previous case would share its content-hashed key, which the
    # scheduler forgets when that case's futures are released ("already forgotten")
    X_binned = [
        client.scatter(binned["X_binned"][a:b], workers=[workers[i % len(workers)]], hash=False) for i, (a, b) in enumerate(parts)
    ]
    actors, held = start_actors(
        client, X_binned, PARAMS.criterion, binned["bin_thresholds"].shape[1], _criteria.n_hist_columns(PARAMS.criterion),
        np.dtype(dtype).name,
    )  # fmt: skip
    assert sorted(n for numbers in held for n in numbers) == list(range(len(parts)))
    rounds = ActorRounds(client, actors, held, direct=direct)
    assert (rounds.channels is not None) == direct  # the test cluster's workers talk TCP: a channel to each
    capacity = max_nodes(PARAMS, n_rows)
    rounds("start_tree", [([(targets[a:b], weights[a:b], capacity) for a, b in (parts[n] for n in numbers)],) for numbers in held])
    driver = dataclasses.replace(data, X_binned=binned["X_binned"][:0], targets=np.empty((0, 2)))
    exchange = PartitionsExchange(rounds)
    tree = grow_tree(
        driver, None, PARAMS, _rng.new_state(np.random.SeedSequence(7)),
        histograms=histogram_pool(data, PARAMS, n_rows, dtype, sampled_features=True), exchange=exchange,
    )  # fmt: skip
    leaves = {n: leaf for numbers, per_actor in zip(held, rounds("row_leaf", (tree.nodes,))) for n, leaf in zip(numbers, per_actor)}
    rounds.close()
    return tree, np.concatenate([leaves[n] for n in range(len(parts))]), rounds, exchange


def grow_in_memory(binned, targets, weights, dtype):
    data = TrainingSet(**binned, targets=targets, leaf_targets=np.zeros(0))
    row_leaf = np.full(len(weights), -1, dtype=np.int64)
    tree = grow_tree(
        data, weights, PARAMS, _rng.new_state(np.random.SeedSequence(7)), row_leaf=row_leaf,
        histograms=histogram_pool(data, PARAMS, int((weights > 0).sum()), dtype, sampled_features=True),
    )  # fmt: skip
    return tree, row_leaf


@pytest.mark.parametrize("direct", [True, False], ids=["channels", "actor calls"])
@pytest.mark.parametrize(
    ("integer_targets", "bounds"), [(False, "one"), (True, "three")], ids=["one partition", "three partitions, integer targets"]
)

def test_a_tree_grown_over_actors_is_the_in_memory_tree_bitwise(dask_client, integer_targets, bounds, direct):
    binned, targets, weights = boosting_problem(integer_targets=integer_targets, missing=True)
    bounds = [0, len(weights)] if bounds == "one" else [0, 500, 1100, len(weights)]
    dtype = np.int32 if integer_targets else np.float64
    local, row_leaf = grow_in_memory(binned, targets, weights, dtype)
    remote, leaves, rounds, exchange = grow_on_actors(dask_client, binned, targets, weights, bounds, dtype, direct)
    assert_same_tree(local, remote)
    np.testing.assert_array_equal(leaves, row_leaf)
    n_splits = int((local.nodes["feature"] >= 0).sum())
    # start, summary, root statistics and histograms; one round per split, which brings the histograms of the
    # child the builder sums next (predicted exactly from the parent's counts) and makes a waiting node's split
    # ahead, except for the splits made ahead, which need none; numbering the last ones made ahead; the leaves
    assert exchange.taken_ahead > n_splits / 3
    assert rounds.rounds == 5 + n_splits - exchange.taken_ahead + exchange.finish_rounds
    histogram_bytes = binned["X_binned"].shape[1] * binned["bin_thresholds"].shape[1] * 3 * np.dtype(dtype).itemsize
    # the root's, one per split, and one per split made ahead that the builder did not make, from each actor
    # (summed over its partitions); every fill's side is known from the pooled counts, so none is asked twice
    fills = 1 + n_splits + exchange.made_ahead - exchange.taken_ahead
    assert fills * histogram_bytes * len(rounds.actors) <= rounds.bytes_received < (fills + 1) * histogram_bytes * len(rounds.actors)


@pytest.mark.parametrize("direct", [True, False], ids=["channels", "actor calls"])
def test_a_lost_partition_stops_the_tree_with_an_error_naming_it(direct):
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        distributed.Client(cluster) as client,
    ):
        binned, targets, weights = boosting_problem(integer_targets=True)
        workers = list(client.scheduler_info()["workers"])
        X_binned = [
            client.scatter(binned["X_binned"][:700], workers=[workers[0]], hash=False),
            client.scatter(binned["X_binned"][700:], workers=[workers[1]], hash=False),
        ]
        actors, held = start_actors(client, X_binned, PARAMS.criterion, binned["bin_thresholds"].shape[1], 3, "int32")
        rounds = ActorRounds(client, actors, held, direct=direct)
        assert (rounds.channels is not None) == direct
        rounds("start_tree", [([(targets[:700], weights[:700], 61)],), ([(targets[700:], weights[700:], 61)],)])
        lost = actors[held.index([1])]._address
        client.run(lambda: __import__("os")._exit(1), workers=[lost], on_error="ignore")  # the nanny restarts it, empty
        deadline = time.monotonic() + 30
        while lost in client.scheduler_info()["workers"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [rounds._listed(index) for index in range(2)] == [numbers != [1] for numbers in held]
        with pytest.raises(LostPartitionsError, match=r"partition\(s\) 1 "):
            rounds("tree_summary", ())


def actors_on_one_worker(client):
    """``start_actors`` for one partition of ``boosting_problem``'s rows on the first worker."""
    binned, _, _ = boosting_problem(integer_targets=True)
    # not keyed by content: the same rows scattered again as the last test releases them would be lost
    X_binned = [client.scatter(binned["X_binned"], workers=[list(client.scheduler_info()["workers"])[0]], hash=False)]
    return start_actors(client, X_binned, PARAMS.criterion, binned["bin_thresholds"].shape[1], 3, "int32")


@pytest.mark.parametrize("direct", [True, False], ids=["channels", "actor calls"])
def test_an_error_of_a_live_partition_is_raised_as_itself(dask_client, direct):
    rounds = ActorRounds(dask_client, *actors_on_one_worker(dask_client), direct=direct)
    with pytest.raises(AttributeError):  # no tree started: not a lost partition
        rounds("summarise", (0,))
    assert rounds("ping", ()) == [True]  # the actor, and its channel, still answer
    rounds.close()


def test_without_a_channel_the_rounds_are_actor_calls(dask_client, monkeypatch):
    def refused(address, alive=None):
        raise ConnectionRefusedError("a firewall between the driver and the worker's port")

    monkeypatch.setattr(_cluster_exchange, "Channel", refused)
    with pytest.warns(RuntimeWarning, match="actor calls.*a firewall"):
        rounds = ActorRounds(dask_client, *actors_on_one_worker(dask_client))
    assert rounds.channels is None
    assert rounds("ping", ()) == [True]


def test_a_round_cut_short_closes_the_channels_for_good(dask_client):
    rounds = ActorRounds(dask_client, *actors_on_one_worker(dask_client))
    [channel] = rounds.channels

    def interrupted():
        raise KeyboardInterrupt

    channel.reply = interrupted  # the request is out, its answer never read
    with pytest.raises(KeyboardInterrupt):
        rounds("ping", ())
    assert rounds.channels is None and channel.socket.fileno() == -1
    with pytest.raises(RuntimeError, match="interrupted"):
        rounds("ping", ())


def test_a_broken_channel_to_a_live_worker_is_not_a_lost_partition(dask_client):
    rounds = ActorRounds(dask_client, *actors_on_one_worker(dask_client))
    rounds.channels[0].socket.shutdown(socket.SHUT_RDWR)
    with pytest.raises(ChannelBroken, match="still there"):
        rounds("ping", ())
    with pytest.raises(RuntimeError, match="interrupted"):
        rounds("ping", ())
