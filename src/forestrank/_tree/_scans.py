"""The pointwise scans: the best cut of one feature in one node.

For a feature, the candidate splits are "bin <= b" between consecutive occupied bins
of the node. The scans visit the same candidates in the same increasing-bin order
(strict ``>`` keeps the first of equal gains), so they agree (tested):

* ``histogram_scan`` (decomposable criteria): accumulate per-bin statistics, then
  walk the occupied bins, found through an occupancy bitmap of 64-bit words, so a
  node costs O(n_node + occupied bins) whatever the number of bins. No comparison
  sort: its mispredicted branches dominated deep nodes;
* ``pooled_scan``: the same walk over a node's pooled histograms (``_histograms``), or,
  where the node's rows fill most bins, a gain for every bin computed four at a time
  (``dense_sweep``);
* ``sorted_sweep`` (stateful criteria, and tests): a counting sort by bin over the
  same bitmap (``sort_by_bin``), then samples move to the left child one at a time.

For entropy and gini only boundary points are evaluated
(``_criteria.boundary_points_suffice``), identically in every scan. RF-rand draws
its split instead (``random_split``).

The loops index their arrays themselves and call scalar helpers of ``_criteria``, or,
for the dense sweep's gains, its one loop over arrays (``_criteria.moment_gains``)
(``docs/design.md``, "Numba rules").
"""

from collections import namedtuple

import numpy as np

from .._numba.bits import pop_lowest_bit
from .._numba.jit import jit
from .._numba.prefetch import GATHER_DISTANCE, prefetch
from . import _criteria, _histograms, _rng, _rows

# ``GrowthParams.missing_direction``: where a split sends the missing values of its feature.
LEARN, LEFT, RIGHT, SEPARATE = 0, 1, 2, 3
MISSING_DIRECTIONS = {"learn": LEARN, "left": LEFT, "right": RIGHT, "separate": SEPARATE}

# Where a found split sends the node's missing rows (the scans' last return value):
# right, left, or apart, to a child of their own (``SEPARATE``'s three-way split).
MISSING_RIGHT, MISSING_LEFT, MISSING_APART = 0, 1, 2

ScanScratch = namedtuple(
    "ScanScratch", ["histogram", "histogram_weight", "histogram_count", "bin_class", "occupied", "left", "present"]
)
ScanScratch.__doc__ = """Per-bin scratch of the scans, all zero between scans.

histogram : float64 array of shape (max_bins, n_statistics)
histogram_weight : float64 array of shape (max_bins,)
histogram_count, bin_class : int64 arrays of shape (max_bins,)
occupied : uint64 array of shape (ceil(max_bins / 64),)
    Occupancy bitmap of the bins.
left : float64 array of shape (n_statistics,)
    The left child's statistics during a sweep.
present : float64 array of shape (n_statistics,), or None
    The statistics of the node's rows with a value, when its missing rows are set
    apart (``set_apart``); None unless ``missing_direction`` is ``SEPARATE``, so
    that numba compiles the three-way split only where it is used.
"""

Node = namedtuple("Node", ["start", "end", "weight", "cost", "statistics", "lower", "upper", "constraint"])
Node.__doc__ = """A node being searched: its positions ``start:end`` in ``SortedRows``, weight,
cost (``_criteria.node_cost``) and statistics (float64, (n_statistics,)); the bounds
of its value (float64, -inf and inf unless a monotone split above set them) and the
monotone constraint of the feature being scanned (int64: -1, 0 or 1), which the
scans hand to ``_criteria.candidate_gain`` with the tree's ``monotonic_cst``: the
scans take that as an argument of its own, None in a tree without constraints,
whose type lets numba drop the clipped gains (a namedtuple field's would not)."""


@jit(inline="always")
def for_feature(node, monotonic_cst, feature):
    """``node`` as a scan of ``feature`` sees it: with that feature's monotone constraint
    (0 in a tree without constraints, ``monotonic_cst`` None)."""
    constraint = np.int64(0) if monotonic_cst is None else np.int64(monotonic_cst[feature])
    return Node(node.start, node.end, node.weight, node.cost, node.statistics, node.lower, node.upper, constraint)


def new_scratch(max_bins: int, n_statistics: int, missing_direction: int) -> ScanScratch:
    """Zeroed ``ScanScratch`` for splits that send missing values by ``missing_direction``."""
    return ScanScratch(
        np.zeros((max_bins, n_statistics)), np.zeros(max_bins), np.zeros(max_bins, dtype=np.int64),
        np.zeros(max_bins, dtype=np.int64), np.zeros((max_bins + 63) // 64, dtype=np.uint64), np.empty(n_statistics),
        np.empty(n_statistics) if missing_direction == SEPARATE else None,
    )  # fmt: skip


@jit(inline="always")
def draw_feature(features, i, rng_state):
    """Step ``i`` of a partial Fisher-Yates shuffle of ``features``: the ``i``-th candidate."""
    j = i + _rng.randint(rng_state, len(features) - i)
    feature = features[j]
    features[j] = features[i]
    features[i] = feature
    return feature


@jit(refcounted=False, callable_from_python=False)
def fill_scratch(X_binned, feature, rows, start, end, criterion, scratch):
    """Sum the rows at positions ``start:end`` into the scratch histogram by their bin of
    ``feature``: per-bin statistics, weights, counts, a single row's class, the bitmap."""
    samples = rows.samples
    row_targets = rows.targets
    row_weights = rows.weights
    histogram = scratch.histogram
    histogram_weight = scratch.histogram_weight
    histogram_count = scratch.histogram_count
    bin_class = scratch.bin_class
    occupied = scratch.occupied
    last_column = row_targets.shape[1] - 1
    if _criteria.uses_classes(criterion):
        for position in range(start, end):
            if position + GATHER_DISTANCE < end:
                prefetch(X_binned, (samples[position + GATHER_DISTANCE], feature))
            b = X_binned[samples[position], feature]
            weight = row_weights[position]
            c = int(row_targets[_rows.target_index(rows, position), 0])
            histogram[b, c] += weight
            histogram_weight[b] += weight
            histogram_count[b] += 1
            bin_class[b] = c  # the bin's class when it holds a single sample
            occupied[b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    else:
        for position in range(start, end):
            if position + GATHER_DISTANCE < end:
                prefetch(X_binned, (samples[position + GATHER_DISTANCE], feature))
            b = X_binned[samples[position], feature]
            weight = row_weights[position]
            at = _rows.target_index(rows, position)
            first, second = _criteria.row_moments(criterion, weight, row_targets[at, 0], row_targets[at, last_column])
            histogram[b, 0] += first
            histogram[b, 1] += second
            histogram_weight[b] += weight
            histogram_count[b] += 1
            occupied[b >> 6] |= np.uint64(1) << np.uint64(b & 63)


@jit(refcounted=False, callable_from_python=False)
def histogram_scan(X_binned, feature, missing_bin, rows, node, params, scratch, present, monotonic_cst, best_gain):
    """Best "bin <= b" of ``feature`` from per-bin sums; returns (is_constant, gain, bin, next bin, missing).

    ``next bin`` is the first occupied bin right of the cut (for the threshold).
    ``gain`` is the cost decrease, kept only when it beats ``best_gain``. When the
    node has rows in the feature's ``missing_bin`` (-1: none), the cuts are evaluated
    with the missing rows on the side(s) ``params.missing_direction`` allows
    (``missing_sweeps``), the "missing left" ones first, or set apart (``SEPARATE``:
    ``set_apart``); ``missing`` (``MISSING_RIGHT``, ``MISSING_LEFT``,
    ``MISSING_APART``) says where the winner sends them. The per-bin buffers and the
    bitmap are all zero on entry and are left so.

    Parameters
    ----------
    X_binned : uint8/uint16/uint32 array of shape (n_rows, n_features), C order
    feature, missing_bin : int
    rows : _rows.SortedRows
    node : Node
    params : _builder.GrowthParams
    scratch : ScanScratch
    present : ``scratch.present``
        A separate argument: numba drops the three-way split where it is None.
    monotonic_cst : None or int8 array of shape (n_features,)
        The tree's monotone constraints, None without any: numba then drops the
        clipped gains (``_criteria.candidate_gain``); ``node.constraint`` is the feature's.
    best_gain : float
    """
    criterion = params.criterion
    fill_scratch(X_binned, feature, rows, node.start, node.end, criterion, scratch)
    histogram = scratch.histogram
    histogram_weight = scratch.histogram_weight
    histogram_count = scratch.histogram_count
    occupied = scratch.occupied
    has_missing = missing_bin >= 0 and histogram_count[missing_bin] > 0
    missing_first, missing_last, cut_before_missing = missing_sweeps(params.missing_direction, has_missing)
    n_occupied = 0
    best_bin = -1
    best_next = -1
    missing = MISSING_RIGHT
    sweep_node = node
    apart_gain = 0.0
    apart = False
    if present is not None:
        apart = has_missing and params.missing_direction == SEPARATE
        if apart:
            apart_gain, sweep_node = set_apart(
                criterion, node, params, rows.integer_weights, histogram[missing_bin], histogram_count[missing_bin],
                histogram_weight[missing_bin], present, monotonic_cst,
            )  # fmt: skip
            if apart_gain > best_gain:
                best_gain, best_bin, best_next = apart_gain, -1, _lowest_bin(occupied, missing_bin)
                missing = MISSING_LEFT
    # One call site in a loop: the sweep is inlined once (two copies cost a third more
    # compile time, a called sweep time per tree: benchmarks/RESULTS.md, "Engine design
    # measurements"), and its flags are variables (a literal True or False would
    # compile a second specialisation).
    for sweep in range(int(missing_first) + int(missing_last)):
        leading = missing_first and sweep == 0  # the missing rows lead this sweep
        n_occupied, gain, b, after = _sweep_bins(
            scratch, sweep_node, params, rows.integer_weights, missing_bin, leading, leading and missing_last,
            cut_before_missing, monotonic_cst, _present_floor(best_gain, apart_gain),
        )  # fmt: skip
        if after >= 0:
            best_gain, best_bin, best_next = gain + apart_gain, b, after
            missing = MISSING_APART if apart else int(leading)
    return n_occupied == 1, best_gain, best_bin, best_next, missing


@jit(refcounted=False, callable_from_python=False)  # one compiled copy serves the three scans
def set_apart(criterion, node, params, integer_weights, missing, n_missing, missing_weight, present, monotonic_cst):
    """The node's missing rows as a child of their own (``SEPARATE``; Mohan's three-way split).

    A three-way split's cost decrease is that of the cut "missing | present" plus that
    of the value cut among the present rows (Mohan's thesis, Eq. 2.1, grouped in two
    steps), so a scan adds the first to what its sweep over the present rows finds.
    For the Hellinger criterion, a distance rather than a cost, the same sum is the
    split's score.

    Parameters
    ----------
    criterion : int
    node : Node
    params : _builder.GrowthParams
    integer_weights : bool
    missing : float64 array of shape (>= n_statistics,)
        The missing rows' statistics (a histogram row: only the first n_statistics
        columns are read).
    n_missing : int
    missing_weight : float
    present : float64 array of shape (n_statistics,)
        Receives the statistics of the rows with a value.
    monotonic_cst : None or int8 array of shape (n_features,)
        As ``histogram_scan`` takes it.

    Returns
    -------
    gain : float
        Gain of "missing | present" (-inf when a side breaks a child minimum).
    present_node : Node
        The present rows as a node, for the sweep: its range ends ``n_missing``
        early (the sweeps read only its length).
    """
    for s in range(len(present)):
        present[s] = node.statistics[s] - missing[s]
    gain = _criteria.sweep_gain(
        criterion, n_missing, node.end - node.start, missing_weight, node.weight, 0.0, 0.0, missing, node.statistics,
        node.cost, params.l2_regularization, integer_weights, params.min_samples_leaf, params.min_child_weight,
        -np.inf, 0.0, node.lower, node.upper, np.int64(0), monotonic_cst,
    )  # fmt: skip
    if _criteria.boundary_points_suffice(criterion, params.min_samples_leaf, params.min_child_weight):
        # Not a boundary point when both sides hold one and the same class.
        n_classes_apart = 0
        for c in range(len(present)):
            n_classes_apart += missing[c] > 0.0 or present[c] > 0.0
        if n_classes_apart <= 1:
            gain = -np.inf
    present_weight = node.weight - missing_weight
    cost, _ = _criteria.node_cost(criterion, present, present_weight, params.l2_regularization, integer_weights)
    return gain, Node(node.start, node.end - n_missing, present_weight, cost, present, node.lower, node.upper, node.constraint)


@jit(inline="always")
def _present_floor(best_gain, apart_gain):
    """The gain a sweep of the present rows must beat for its three-way split to beat
    ``best_gain`` (``apart_gain``: 0 when no rows are set apart); none can when the
    missing rows are too few for a child of their own (-inf)."""
    return best_gain - apart_gain if apart_gain > -np.inf else np.inf


@jit(inline="always")
def _lowest_bin(occupied, skip_bin):
    """The lowest bin set in the ``occupied`` bitmap other than ``skip_bin`` (-1 if none)."""
    for word_index in range(len(occupied)):
        word = occupied[word_index]
        while word != np.uint64(0):
            word, bit = pop_lowest_bit(word)
            b = word_index * 64 + bit
            if b != skip_bin:
                return b
    return -1


@jit(inline="always")
def missing_sweeps(missing_direction, has_missing):
    """The sweeps a feature's scan makes: (missing rows first, missing rows last, whether
    the second evaluates the cut between the present rows and the missing ones).

    Without missing rows in the node: one sweep, as if the feature had no missing bin.
    ``LEARN`` makes both; the cut "missing | present" is the first sweep's first
    candidate (the missing rows alone on the left: bin -1), so the second skips it.
    ``LEFT`` and ``RIGHT`` make one, which is what imputing -inf or +inf would search.
    ``SEPARATE`` sweeps the present rows only (the missing bin comes last, uncut); the
    caller sets the missing rows apart (``set_apart``).
    """
    if not has_missing:
        return False, True, True
    return missing_direction == LEARN or missing_direction == LEFT, missing_direction != LEFT, missing_direction == RIGHT


@jit(inline="always")
def _pure_class(scratch, b):
    """The class of every row in bin ``b`` of the scratch histogram, or -1 if it holds several."""
    if scratch.histogram_count[b] == 1:
        return scratch.bin_class[b]
    pure = -1
    for c in range(scratch.histogram.shape[1]):
        if scratch.histogram[b, c] > 0.0:
            pure = c if pure == -1 else -2
    return max(pure, -1)


@jit(inline="always")
def move_bin(scratch, b, criterion, node_statistics, integer_weights, left_terms, right_terms, clear):
    """Add bin ``b`` of the scratch histogram to the left child (``scratch.left``); clear it if ``clear``.

    Returns the new ``A_L``, ``A_R`` (class criteria) and the bin's weight and row count.
    """
    histogram = scratch.histogram
    left = scratch.left
    count = scratch.histogram_count[b]
    weight = scratch.histogram_weight[b]
    if _criteria.uses_classes(criterion):
        # A one-sample bin holds its known class only: skip the class loop.
        first_class = scratch.bin_class[b] if count == 1 else 0
        last_class = first_class + 1 if count == 1 else histogram.shape[1]
        for c in range(first_class, last_class):
            moved = histogram[b, c]
            if moved != 0.0:
                delta_left, delta_right = _criteria.class_move(criterion, left[c], moved, node_statistics[c], integer_weights)
                left[c] += moved
                left_terms += delta_left
                right_terms += delta_right
                if clear:
                    histogram[b, c] = 0.0
    else:
        left[0] += histogram[b, 0]
        left[1] += histogram[b, 1]
        if clear:
            histogram[b, 0] = 0.0
            histogram[b, 1] = 0.0
    if clear:
        scratch.histogram_weight[b] = 0.0
        scratch.histogram_count[b] = 0
    return left_terms, right_terms, weight, count


@jit(inline="always")
def _sweep_bins(scratch, node, params, integer_weights, missing_bin, missing_first, keep, cut_before_missing, monotonic_cst, best_gain):
    """Walk the occupied bins of the scratch histogram, moving each to the left child, and
    evaluate the cut before each; returns (occupied bins, gain, bin, next bin), next bin
    -1 when no cut beats ``best_gain``.

    With ``missing_first`` the ``missing_bin`` is moved left before the walk and skipped
    by it, so every cut sends the missing rows left, the first (bin -1) them alone.
    Otherwise the missing bin comes last, and the cut before it is evaluated only with
    ``cut_before_missing``. ``keep`` leaves the histogram and the bitmap as they are
    for another sweep; otherwise they are cleared on the way.
    """
    criterion = params.criterion
    min_samples_leaf = params.min_samples_leaf
    min_child_weight = params.min_child_weight
    node_statistics = node.statistics
    node_weight = node.weight
    occupied = scratch.occupied
    left = scratch.left
    n_node = node.end - node.start
    boundaries_only = _criteria.boundary_points_suffice(criterion, min_samples_leaf, min_child_weight)
    tolerance = _criteria.screening_tolerance(node_weight)
    left_terms = 0.0
    right_terms = _criteria.sweep_start(criterion, left, node_statistics, integer_weights)
    left_weight = 0.0
    left_count = 0
    previous = -1  # last bin moved left (-1: the missing one): the cut "bin <= previous" is pending
    previous_class = -1
    n_occupied = 0
    best_bin = -1
    best_next = -1
    word_index = -1
    word = np.uint64(0)
    pending_missing = missing_first
    while True:
        # The next bin: the missing one first when it leads, then the bitmap's in order.
        if pending_missing:
            b = missing_bin
            pending_missing = False
        else:
            while word == np.uint64(0) and word_index + 1 < len(occupied):
                word_index += 1
                word = occupied[word_index]
                if not keep:
                    occupied[word_index] = np.uint64(0)
            if word == np.uint64(0):
                break
            word, bit = pop_lowest_bit(word)
            b = word_index * 64 + bit
            if missing_first and b == missing_bin:
                continue
        n_occupied += 1
        current_class = _pure_class(scratch, b) if boundaries_only else -1
        evaluate = n_occupied > 1 and (cut_before_missing or b != missing_bin)
        if evaluate and not (current_class >= 0 and current_class == previous_class):
            gain = _criteria.sweep_gain(
                criterion, left_count, n_node, left_weight, node_weight, left_terms, right_terms, left, node_statistics,
                node.cost, params.l2_regularization, integer_weights, min_samples_leaf, min_child_weight, best_gain,
                tolerance, node.lower, node.upper, node.constraint, monotonic_cst,
            )  # fmt: skip
            if gain > best_gain:
                best_gain = gain
                best_bin = previous
                best_next = b
        left_terms, right_terms, moved_weight, moved_count = move_bin(
            scratch, b, criterion, node_statistics, integer_weights, left_terms, right_terms, not keep
        )
        left_weight += moved_weight
        left_count += moved_count
        previous = b if b != missing_bin else -1
        previous_class = current_class
    return n_occupied, best_gain, best_bin, best_next


@jit(refcounted=False, callable_from_python=False)
def pooled_scan(histograms, slot_bins, slot_marked, slot, feature, n_bins, missing_bin, node, params, present, monotonic_cst, best_gain, prefix):
    """``histogram_scan`` for a moment criterion, reading the bins of ``histograms[slot, feature]``.

    Same candidates in the same order (between consecutive occupied bins, the missing
    rows left, then right, or set apart), same return values: (is_constant, gain,
    bin, next bin, missing). ``present`` is ``ScanScratch.present`` (None: no three-way split),
    ``monotonic_cst`` as ``histogram_scan`` takes it. ``slot_bins`` and ``slot_marked``
    are the pool's (``_histograms.Pool``): the sweep of a marked slot walks its marked
    bins only. A node of at least ``min_samples_leaf`` rows (and one), none of them
    missing the feature, whose values are not clipped and whose slot is not marked (a
    marked slot's few rows the walk visits alone), is swept by ``dense_sweep`` in the
    calling thread's ``prefix`` (float64, (_histograms.N_PREFIX_ROWS, max_bins): a row of
    ``_histograms.Pool.sweep_prefix``).
    """
    histogram = histograms[slot, feature]
    bins = slot_bins[slot, feature]
    marked = slot_marked[slot]
    n_missing = int(histogram[missing_bin, _histograms.HIST_COUNT]) if missing_bin >= 0 else 0
    dense = (
        not marked
        and n_missing == 0
        and node.end - node.start >= max(params.min_samples_leaf, 1)
        and not _criteria.clips(monotonic_cst, node.constraint, node.lower, node.upper)
    )
    missing_first, missing_last, cut_before_missing = missing_sweeps(params.missing_direction, n_missing > 0)
    n_occupied = 0
    best_bin = -1
    best_next = -1
    missing = MISSING_RIGHT
    sweep_node = node
    apart_gain = 0.0
    apart = False
    if present is not None:
        apart = n_missing > 0 and params.missing_direction == SEPARATE
        if apart:
            weighted = histogram.shape[1] > _histograms.HIST_WEIGHT
            missing_weight = histogram[missing_bin, _histograms.HIST_WEIGHT] if weighted else 0.0
            apart_gain, sweep_node = set_apart(
                params.criterion, node, params, False, histogram[missing_bin], n_missing, missing_weight, present,
                monotonic_cst,
            )
            if apart_gain > best_gain:
                lowest = 0
                while histogram[lowest, _histograms.HIST_COUNT] == 0.0 or lowest == missing_bin:
                    lowest += 1
                best_gain, best_bin, best_next, missing = apart_gain, -1, lowest, MISSING_LEFT
    for sweep in range(int(missing_first) + int(missing_last)):  # one call site, as in histogram_scan
        leading = missing_first and sweep == 0
        if dense:
            n_occupied, gain, b, after = dense_sweep(histogram, n_bins, sweep_node, params, prefix, best_gain)
        else:
            n_occupied, gain, b, after = _pooled_sweep(
                histogram, bins, marked, n_bins, missing_bin, leading, cut_before_missing, sweep_node, params,
                monotonic_cst, _present_floor(best_gain, apart_gain),
            )  # fmt: skip
        if after >= 0:
            best_gain, best_bin, best_next = gain + apart_gain, b, after
            missing = MISSING_APART if apart else int(leading)
    # The present rows' sweep stops at their last bin: with rows on both sides of the
    # missing test, the feature varies even when they share one bin.
    return n_occupied == 1 and not (apart and n_missing < node.end - node.start), best_gain, best_bin, best_next, missing


@jit(refcounted=False, callable_from_python=False)
def dense_sweep(histogram, n_bins, node, params, prefix, best_gain):
    """``_pooled_sweep`` of a feature without missing rows in the node, whose gains are not
    clipped (``_criteria.clips``), in three passes over its bins: the left child's sums
    at every cut into ``prefix`` (float64 array of shape (_histograms.N_PREFIX_ROWS, max_bins)), the
    gains of the cuts leaving ``min_samples_leaf`` rows on both sides into its
    ``_histograms.PREFIX_GAIN`` row at once (``_criteria.moment_gains``, vectorised), and the first
    of the largest gains. The same return values, bit for bit.

    The sums take a bin's values only where it holds rows, as the walk adds only
    those (a subtraction may leave a rounding remainder in a bin without rows). A
    cut after an empty bin has the sums of the cut after the last occupied bin
    before it, so its gain equals that cut's and, coming later, never wins: the first
    largest gain is the walk's, at an occupied bin. The walk visits only the occupied
    bins, but computes each gain as it goes, a loop LLVM cannot vectorise: a gain
    for every bin computed four at a time costs less than half as much on a node
    whose rows fill most bins (``benchmarks/RESULTS.md``, "The split search's gains four at
    a time"). The first pass stops, as the walk does, once fewer than
    ``min_samples_leaf`` rows are right of the cut, and counts the occupied bins as the
    walk counts them (only a count of 1 is read: a constant feature). Bit for bit where
    the histograms' sums are finite: an empty bin's value times 0 is not 0 if infinite.

    Parameters
    ----------
    histogram : float64 or int32 array of shape (max_bins, n_hist_columns)
        One feature's pooled histogram in the node.
    n_bins : int
    node : Node
    params : _builder.GrowthParams
    prefix : float64 array of shape (_histograms.N_PREFIX_ROWS, max_bins)
        Scratch, overwritten.
    best_gain : float
        The gain to beat.

    Returns
    -------
    n_occupied : int
    gain : float
    bin, next_bin : int
        The cut's last left bin and first right occupied bin; -1 and -1 if no cut beats
        ``best_gain``.
    """
    n_node = node.end - node.start
    last_right = max(params.min_samples_leaf, 1)
    weighted = histogram.shape[1] > _histograms.HIST_WEIGHT
    firsts = prefix[_histograms.PREFIX_FIRST]
    seconds = prefix[_histograms.PREFIX_SECOND]
    weights = prefix[_histograms.PREFIX_WEIGHT]
    gains = prefix[_histograms.PREFIX_GAIN]
    left_first = 0.0
    left_second = 0.0
    left_weight = 0.0
    left_count = 0.0
    n_occupied = 0
    lo = n_bins
    hi = n_bins
    for b in range(n_bins):
        # An empty bin's values count as zero, multiplied rather than tested: a test of
        # the count stays a branch, which a node's scattered bins mispredict. Adding the
        # product, 0 or -0 for an empty bin, leaves a sum that starts at +0 bit for bit.
        count = histogram[b, _histograms.HIST_COUNT]
        kept = np.float64(count != 0.0)
        left_first += histogram[b, _histograms.HIST_FIRST] * kept
        left_second += histogram[b, _histograms.HIST_SECOND] * kept
        if weighted:
            left_weight += histogram[b, _histograms.HIST_WEIGHT] * kept
            weights[b] = left_weight
        left_count += count
        n_occupied += count != 0.0
        firsts[b] = left_first
        seconds[b] = left_second
        if lo == n_bins and left_count >= last_right:
            lo = b
        # Only an occupied bin changes the count: the walk's test after each one, as the
        # node holds at least last_right rows (``pooled_scan``).
        if n_node - left_count < last_right:
            hi = b
            n_occupied += int(left_count < n_node)
            break
    _criteria.moment_gains(
        params.criterion, firsts, seconds, weights, gains, lo, hi, node.statistics[0], node.statistics[1], node.weight,
        node.cost, params.l2_regularization, params.min_child_weight,
    )  # fmt: skip
    best_bin = -1
    for j in range(lo, hi):
        if gains[j] > best_gain:
            best_gain = gains[j]
            best_bin = j
    best_next = -1
    if best_bin >= 0:
        best_next = best_bin + 1
        # The counts of the node's bins add up to its rows, so an occupied bin follows a
        # cut with rows right of it; the bound keeps the reads in the array regardless.
        while best_next < n_bins - 1 and histogram[best_next, _histograms.HIST_COUNT] == 0.0:
            best_next += 1
    return n_occupied, best_gain, best_bin, best_next


@jit(refcounted=False, callable_from_python=False)
def _pooled_sweep(histogram, bins, marked, n_bins, missing_bin, missing_first, cut_before_missing, node, params, monotonic_cst, best_gain):
    """``_sweep_bins`` over the bins of one pooled histogram in increasing order.

    The bins are walked 64 at a time: a word marks the occupied ones, built without a
    branch, and its set bits are visited in order. Testing each bin's count instead
    mispredicts at nearly every occupied bin of a small node, whose few rows scatter
    over the feature's bins (``benchmarks/RESULTS.md``, "Boosting speed: where an
    iteration goes"). Where the slot is ``marked``, the words are its marks (``bins``,
    uint64 (n_words,): ``_histograms.Pool.slot_bins``), read instead of every count; a
    marked bin may have lost its rows to the subtraction, and is passed over.

    The walk ends once fewer than ``min_samples_leaf`` rows are right of the cut: every
    later cut leaves fewer still, so ``candidate_gain`` would refuse it. It thus never
    reaches the missing bin (the last) once ``missing_first`` has moved it left, and a
    walk that ends with rows still right of it has passed one occupied bin less than
    there are: the count it returns is one more, as only its being 1 is read (a feature
    constant in the node). Row counts stay in the histogram's type (float64 holds them
    exactly): converting every bin's count to an integer lengthened the sweep."""
    node_statistics = node.statistics
    n_node = node.end - node.start
    last_right = max(params.min_samples_leaf, 1)
    left_first = 0.0
    left_second = 0.0
    left_weight = 0.0
    left_count = 0
    weighted = histogram.shape[1] > _histograms.HIST_WEIGHT
    if missing_first:
        left_first = histogram[missing_bin, _histograms.HIST_FIRST]
        left_second = histogram[missing_bin, _histograms.HIST_SECOND]
        if weighted:
            left_weight = histogram[missing_bin, _histograms.HIST_WEIGHT]
        left_count = histogram[missing_bin, _histograms.HIST_COUNT]
    previous = -1
    n_occupied = int(missing_first)
    best_bin = -1
    best_next = -1
    for word_start in range(0, n_bins, 64):
        if marked:
            word = bins[word_start >> 6]
        else:
            word = np.uint64(0)
            for b in range(word_start, min(word_start + 64, n_bins)):
                word |= np.uint64(histogram[b, _histograms.HIST_COUNT] != 0.0) << np.uint64(b - word_start)
        while word != np.uint64(0):
            word, bit = pop_lowest_bit(word)
            b = word_start + bit
            count = histogram[b, _histograms.HIST_COUNT]
            if marked and count == 0.0:
                continue
            n_occupied += 1
            if (previous >= 0 or missing_first) and (cut_before_missing or b != missing_bin):
                gain = _criteria.candidate_gain(
                    params.criterion, left_count, n_node, left_weight, node.weight, 0.0, 0.0, left_first, left_second,
                    node_statistics[0], node_statistics[1], node.cost, params.l2_regularization, np.bool_(False),
                    params.min_samples_leaf, params.min_child_weight, node.lower, node.upper, node.constraint,
                    monotonic_cst,
                )  # fmt: skip
                if gain > best_gain:
                    best_gain = gain
                    best_bin = previous
                    best_next = b
            left_first += histogram[b, _histograms.HIST_FIRST]
            left_second += histogram[b, _histograms.HIST_SECOND]
            if weighted:
                left_weight += histogram[b, _histograms.HIST_WEIGHT]
            left_count += count
            previous = b
            if n_node - left_count < last_right:
                return n_occupied + int(left_count < n_node), best_gain, best_bin, best_next
    return n_occupied, best_gain, best_bin, best_next


@jit(inline="always")
def trailing_missing(order, n_node, missing_bin):
    """Rows in ``missing_bin`` (-1: none) at the end of ``order[:n_node]`` sorted by bin (``sort_by_bin``)."""
    n_missing = 0
    while missing_bin >= 0 and n_missing < n_node and order[n_node - 1 - n_missing, 1] == missing_bin:
        n_missing += 1
    return n_missing


@jit(refcounted=False)  # tests sort a node before calling the listwise sweep
def sort_by_bin(X_binned, feature, samples, start, end, histogram_count, occupied, order):
    """Counting sort of the node's positions by bin of ``feature``.

    Writes ``order[r, 0]``, the position of rank ``r``, and ``order[r, 1]``, its bin,
    for ``r < n_node`` (the sweeps then read bins sequentially instead of gathering
    them from ``X_binned``); ``order[position, 2]`` keeps each position's bin, so
    ``X_binned`` (row-major: a cache line per row) is gathered once, not once per
    pass. O(n_node + occupied bins) through the occupancy bitmap; stable, so equal
    bins keep increasing positions. ``histogram_count`` and ``occupied`` are all
    zero on entry and are left so. Returns the number of distinct bins; when it is
    1 (the feature is constant in the node, which the callers skip) ``order`` is
    not written.
    """
    for position in range(start, end):
        if position + GATHER_DISTANCE < end:
            prefetch(X_binned, (samples[position + GATHER_DISTANCE], feature))
        b = X_binned[samples[position], feature]
        order[position, 2] = b
        histogram_count[b] += 1
        occupied[b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    # Exclusive prefix sums over the occupied bins turn counts into output offsets.
    offset = 0
    n_runs = 0
    for word_index in range(len(occupied)):
        word = occupied[word_index]
        occupied[word_index] = np.uint64(0)
        while word != np.uint64(0):
            word, bit = pop_lowest_bit(word)
            b = word_index * 64 + bit
            count = histogram_count[b]
            histogram_count[b] = offset
            offset += count
            n_runs += 1
    if n_runs == 1:  # a constant feature: its single bin's offset is 0 already
        return n_runs
    for position in range(start, end):  # ranks are below n_node: column 2 is not overwritten
        b = order[position, 2]
        rank = histogram_count[b]
        order[rank, 0] = position
        order[rank, 1] = b
        histogram_count[b] = rank + 1
    for rank in range(end - start):
        histogram_count[order[rank, 1]] = 0
    return n_runs


@jit(refcounted=False, callable_from_python=False)
def sorted_sweep(X_binned, feature, missing_bin, rows, node, params, scratch, present, monotonic_cst, order, best_gain):
    """Best "bin <= b" of ``feature`` by moving samples one at a time in bin order.

    ``sort_by_bin`` orders the node's positions (``order``: int64 scratch of shape
    (>= n_tree_rows, 3)); samples then shift to the left child one by one and
    every end of a run of equal bins is a candidate. The node's rows in
    ``missing_bin`` sort last; when there are any, a first sweep moves them left
    before the others, or they are set apart (``set_apart``; ``present`` and
    ``monotonic_cst`` as in ``histogram_scan``). Stateful criteria need this path; for decomposable ones it
    must agree with the histogram scan. Returns (is_constant, gain, bin, next bin,
    missing).
    """
    n_node = node.end - node.start
    if sort_by_bin(X_binned, feature, rows.samples, node.start, node.end, scratch.histogram_count, scratch.occupied, order) == 1:
        return True, best_gain, -1, -1, MISSING_RIGHT
    n_missing = trailing_missing(order, n_node, missing_bin)
    missing_first, missing_last, cut_before_missing = missing_sweeps(params.missing_direction, n_missing > 0)
    best_bin = -1
    best_next = -1
    missing = MISSING_RIGHT
    sweep_node = node
    sweep_missing = n_missing  # the missing rows the sweep sees
    apart_gain = 0.0
    apart = False
    if present is not None:
        apart = n_missing > 0 and params.missing_direction == SEPARATE
        if apart:
            missing_statistics = scratch.left
            for s in range(len(missing_statistics)):
                missing_statistics[s] = 0.0
            missing_weight = 0.0
            last_column = rows.targets.shape[1] - 1
            for rank in range(n_node - n_missing, n_node):
                position = order[rank, 0]
                weight = rows.weights[position]
                at = _rows.target_index(rows, position)
                _criteria.accumulate(
                    params.criterion, missing_statistics, weight, rows.targets[at, 0], rows.targets[at, last_column]
                )
                missing_weight += weight
            apart_gain, sweep_node = set_apart(
                params.criterion, node, params, rows.integer_weights, missing_statistics, n_missing, missing_weight,
                present, monotonic_cst,
            )  # fmt: skip
            sweep_missing = 0
            if apart_gain > best_gain:
                best_gain, best_bin, best_next, missing = apart_gain, -1, order[0, 1], MISSING_LEFT
    for sweep in range(int(missing_first) + int(missing_last)):  # one call site, as in histogram_scan
        leading = missing_first and sweep == 0
        gain, b, after = _sorted_pass(
            rows, sweep_node, params, monotonic_cst, scratch.left, order, sweep_missing, leading, cut_before_missing,
            _present_floor(best_gain, apart_gain),
        )  # fmt: skip
        if after >= 0:
            best_gain, best_bin, best_next = gain + apart_gain, b, after
            missing = MISSING_APART if apart else int(leading)
    return False, best_gain, best_bin, best_next, missing


@jit(refcounted=False, callable_from_python=False)
def _sorted_pass(rows, node, params, monotonic_cst, left, order, n_missing, missing_first, cut_before_missing, best_gain):
    """One sweep of ``sorted_sweep`` over the node's positions in ``order``, whose last
    ``n_missing`` are the missing rows: with ``missing_first`` they move left before the
    others (the first cut, bin -1, leaves them alone on the left); otherwise they come
    last, and the cut before them is evaluated only with ``cut_before_missing``.
    Returns (gain, bin, next bin) of the best cut that beats ``best_gain``, next bin -1
    if none."""
    criterion = params.criterion
    integer_weights = rows.integer_weights
    min_samples_leaf = params.min_samples_leaf
    min_child_weight = params.min_child_weight
    row_targets = rows.targets
    row_weights = rows.weights
    node_statistics = node.statistics
    node_weight = node.weight
    n_node = node.end - node.start
    classes = _criteria.uses_classes(criterion)
    last_column = row_targets.shape[1] - 1
    boundaries_only = _criteria.boundary_points_suffice(criterion, min_samples_leaf, min_child_weight)
    tolerance = _criteria.screening_tolerance(node_weight)
    left_terms = 0.0
    right_terms = _criteria.sweep_start(criterion, left, node_statistics, integer_weights)
    left_weight = 0.0
    n_present = n_node - n_missing
    n_missing_first = n_missing if missing_first else 0
    best_bin = -1
    best_next = -1
    run_class = -2  # class shared by the current run of equal bins so far (-1: mixed, -2: empty)
    for step in range(n_node - 1):
        # The missing rows first when they lead (the positions n_present.. of the order).
        rank = (step + n_present) % n_node if n_missing_first > 0 else step
        position = order[rank, 0]
        weight = row_weights[position]
        at = _rows.target_index(rows, position)
        if classes:
            c = int(row_targets[at, 0])
            delta_left, delta_right = _criteria.class_move(criterion, left[c], weight, node_statistics[c], integer_weights)
            left[c] += weight
            left_terms += delta_left
            right_terms += delta_right
            if boundaries_only:
                run_class = c if run_class == -2 or run_class == c else -1
        else:
            first, second = _criteria.row_moments(criterion, weight, row_targets[at, 0], row_targets[at, last_column])
            left[0] += first
            left[1] += second
        left_weight += weight
        if step < n_missing_first - 1:
            continue  # the missing rows' own moves end no cut but the last
        if step == n_missing_first - 1:
            b = -1  # the missing rows alone on the left
            next_bin = order[0, 1]
        else:
            b = order[rank, 1]
            next_bin = order[rank + 1, 1]
            if next_bin == b:
                continue  # not a boundary between bins
            if n_missing > 0 and not missing_first and not cut_before_missing and rank + 1 == n_present:
                continue
        skip = False
        if boundaries_only and run_class >= 0:  # skip when the next run holds run_class only, too
            skip = True
            for ahead in range(0 if b < 0 else rank + 1, n_node):  # b -1: the present rows start at 0
                if order[ahead, 1] != next_bin:
                    break
                if int(row_targets[order[ahead, 0], 0]) != run_class:
                    skip = False
                    break
        run_class = -2
        if skip:
            continue
        gain = _criteria.sweep_gain(
            criterion, step + 1, n_node, left_weight, node_weight, left_terms, right_terms, left, node_statistics,
            node.cost, params.l2_regularization, integer_weights, min_samples_leaf, min_child_weight, best_gain,
            tolerance, node.lower, node.upper, node.constraint, monotonic_cst,
        )  # fmt: skip
        if gain > best_gain:
            best_gain = gain
            best_bin = b
            best_next = next_bin
    return best_gain, best_bin, best_next


@jit(refcounted=False, callable_from_python=False)
def random_split(X_binned, n_bins, missing_bins, bin_values, samples, start, end, features, rng_state, min_samples_leaf, missing_left):
    """RF-rand split (Ibrahim & Carman §6.1.1): a random usable feature, a uniform cut.

    The cut ``t`` is uniform between the node's smallest and largest present value
    of the feature (bin representatives); samples whose bin value is ``<= t`` go
    left, missing ones right unless ``missing_left`` (the split draws, it does not
    learn). The builder places the threshold between that bin and the next, which
    partitions the training rows exactly as ``t`` does. A cut that leaves a side
    fewer than ``min_samples_leaf`` rows is dropped and the next feature drawn, as
    scikit-learn's extremely randomised trees (Geurts et al. 2006) do; a cut always
    leaves a row on each side, so with one row a leaf the draws are those of the
    plain algorithm.

    Returns
    -------
    feature : int
        -1 when every feature is constant in the node.
    bin : int
        Largest bin going left.
    next_bin : int
        Smallest bin going right whose value exceeds the cut.
    """
    n_features = len(features)
    for i in range(n_features):
        feature = draw_feature(features, i, rng_state)
        lowest = n_bins[feature]
        highest = -1
        missing_bin = missing_bins[feature]
        for position in range(start, end):
            b = X_binned[samples[position], feature]
            if b != missing_bin:
                lowest = min(lowest, b)
                highest = max(highest, b)
        if lowest >= highest:  # one present value or none
            continue
        low_value = bin_values[feature, lowest]
        high_value = bin_values[feature, highest]
        u = _rng.uniform(rng_state)
        threshold = low_value + u * (high_value - low_value)
        if not np.isfinite(threshold):  # a range past float64's largest: the same draw, weighted by ends
            threshold = (1.0 - u) * low_value + u * high_value
        b = lowest
        while b + 1 < highest and bin_values[feature, b + 1] <= threshold:
            b += 1
        if min_samples_leaf > 1:
            n_left = 0
            for position in range(start, end):
                row_bin = X_binned[samples[position], feature]
                n_left += (missing_left != 0) if row_bin == missing_bin else row_bin <= b
            if n_left < min_samples_leaf or end - start - n_left < min_samples_leaf:
                continue
        return feature, b, b + 1
    return -1, -1, -1
