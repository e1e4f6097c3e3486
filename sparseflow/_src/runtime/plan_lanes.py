"""Two heavy steps at once in a straight-line plan: one on an intra-op pool thread, one on the caller.

A layer's backward pass makes two independent products of the same size from one gradient: the
weight gradient ``x^T dz`` and the input gradient ``dz W^T``. Run in turn, each is split over all
cores in blocks, and every block packs the operand the blocks share again. Run at once, one per
core, each is a single BLAS call: no block is packed twice and no core waits for the other
between the two. Likewise a step's pulls (and pushes) of two embedding tables are independent,
single-threaded, and can share the two cores. :func:`plan_forks` finds such pairs in a plan's
order; the plan starts the first of a pair beside the caller (``intra_op.run_beside``), runs the
steps up to and including the second, and takes the first's result before its first use.

Moved are only stateless products (``MatMul``, ``_FusedMatMul``, ``_SlicedMatMul``; in ``"pool"``
GEMM mode) and table pulls and pushes (each under its table's lock, never beside another op on the same
table), and only when large (:data:`FORK_MIN_FLOP`, :data:`FORK_MIN_KEYS`) with two intra-op
threads or more; otherwise the step runs where it is, as before. Results are the same either way:
a step computes the same values whichever thread runs it. ``SPARSEFLOW_PLAN_FORKS=0`` turns it off.

Of two table pulls side by side, the one whose rows the plan needs later goes beside the caller
(:func:`order_table_pairs`): the caller then pulls the other and goes on with its users (a wide
table's gather and sum) while the fork still runs, instead of waiting for the fork's rows first.

    >>> import numpy as np
    >>> a = np.ones((512, 256), np.float32)
    >>> start = fork_runner(np.matmul, lambda a, b: True)
    >>> join = start(a, a.T)
    >>> float(join()[0, 0])
    256.0
"""

from __future__ import annotations

from sparseflow._src.kernels import intra_op

GEMM_OPS = frozenset({"MatMul", "_FusedMatMul", "_SlicedMatMul"})
# Stateful, but each works on the table of its input 0 under that table's lock: two on different
# tables may run at once (a training step's wide and deep pulls, and their pushes).
TABLE_OPS = frozenset({"EmbeddingTablePull", "EmbeddingTablePush"})
PARTNER_OPS = GEMM_OPS | TABLE_OPS | {"_GroupedApply"}  # heavy steps worth running beside a fork
INERT_OPS = frozenset({"Const", "NoOp", "VariableV2", "VarHandleOp"})  # not counted in the window
WINDOW = 6  # steps after a fork searched for its partner
FORK_MIN_FLOP = 32_000_000  # products smaller than this (2*m*k*n) run where they are
FORK_MIN_KEYS = 4096  # table ops on fewer keys run where they are


PAIR_ORDER_OPS = frozenset({"EmbeddingTablePull"})  # pairs whose order decides what the caller does meanwhile


def order_table_pairs(order: list, extra_deps: dict[str, list[str]]) -> list:
    """``order`` (a topological order of nodes) with each pair of table pulls on different tables,
    the second within :data:`WINDOW` steps of the first and needing nothing from the steps between,
    swapped when the first's rows are used sooner: :func:`plan_forks` forks the first of a pair, so
    the fork becomes the pull whose rows the caller waits for last. Still a topological order."""
    order = list(order)
    pos = {n.name: i for i, n in enumerate(order)}
    users: dict[str, list[str]] = {}  # node -> its data consumers
    for n in order:
        for s in n.data_inputs:
            users.setdefault(s.split(":")[0], []).append(n.name)

    def first_use(name):
        return min((pos[u] for u in users.get(name, ())), default=len(order))

    for i in range(len(order)):
        a = order[i]
        if a.op not in PAIR_ORDER_OPS or not a.data_inputs:
            continue
        for j in range(i + 1, min(len(order), i + 1 + WINDOW)):
            b = order[j]
            if b.op != a.op or not b.data_inputs or b.data_inputs[0] == a.data_inputs[0]:
                continue
            needs = [x.split(":")[0].lstrip("^") for x in b.inputs] + list(extra_deps.get(b.name, ()))
            if all(pos.get(x, -1) < i for x in needs) and first_use(b.name) > first_use(a.name):
                order[i:j + 1] = [b] + order[i:j]  # b needs nothing from a's place on: it may go first
                pos.update((n.name, k) for k, n in enumerate(order[i:j + 1], i))
            break
    return order


def plan_forks(steps, after: dict[int, set[int]]) -> dict[int, int | None]:
    """``{fork step: step to join it before at the latest}`` (None: before its first use only).
    A fork runs beside the caller while the caller runs the steps up to its partner: a heavy step
    (:data:`PARTNER_OPS`) of the plan's order that does not need it, within :data:`WINDOW` steps
    other than constants, variables and NoOps; one that is never forked if there is one (it may
    partner several forks), else the first (which then stays on the caller). A table op is joined
    before the next step that uses its table, and its partner comes before that step."""
    ancestors: list[int] = []  # bit set of each step's transitive inputs (data and control)
    for st in steps:
        bits = 0
        for p in {p for p, _ in st.inputs if p >= 0} | after.get(st.index, set()):
            bits |= ancestors[p] | (1 << p)
        ancestors.append(bits)
    forks: dict[int, int | None] = {}
    taken: set[int] = set()  # partners that could have been forks: each runs beside one fork only
    for st in steps:
        i = st.index
        if i in taken or not _forkable(st):
            continue
        table = st.inputs[0][0] if st.node.op in TABLE_OPS else None
        join_by = None
        if table is not None:
            join_by = next((j for j in range(i + 1, len(steps)) if any(p == table for p, _ in steps[j].inputs)),
                           None)
        counted, first = 0, None
        for j in range(i + 1, len(steps) if join_by is None else join_by):
            if steps[j].node.op in INERT_OPS:
                continue  # a NoOp that waits for the fork stands for it: its users join it (the plan)
            counted += 1
            if counted > WINDOW or ancestors[j] >> i & 1:
                break  # a step before the partner needs the fork: nothing to overlap with
            if j in taken or steps[j].node.op not in PARTNER_OPS:
                continue
            if not _forkable(steps[j]):
                first = j  # stays on the caller whatever else is forked: it may partner several forks
                break
            if first is None:
                first = j
        if first is not None:
            forks[i] = join_by
            if _forkable(steps[first]):
                taken.add(first)
    return forks


def _forkable(st) -> bool:
    if st.needs_context or getattr(st.compute, "start_async", None) is not None:
        return False
    if st.node.op in GEMM_OPS:
        return st.num_outputs == 1
    return st.node.op in TABLE_OPS and bool(st.inputs) and st.inputs[0][0] >= 0


def is_large(node):
    """A function of a fork's arguments: is running it beside the caller worth a thread hand-off?"""
    if node.op in TABLE_OPS:
        return lambda res, keys, *rest: getattr(keys, "shape", (0,))[:1] >= (FORK_MIN_KEYS,)
    ta, tb = bool(node.attrs.get("transpose_a", False)), bool(node.attrs.get("transpose_b", False))

    def large(a, b, *rest):
        shape_a, shape_b = getattr(a, "shape", ()), getattr(b, "shape", ())
        if len(shape_a) != 2 or len(shape_b) != 2 or intra_op.gemm_mode() != "pool":
            return False  # BLAS-threaded products would each take every core
        m, k = shape_a[::-1] if ta else shape_a
        n = shape_b[0] if tb else shape_b[1]
        return 2 * m * k * n >= FORK_MIN_FLOP

    return large


def fork_runner(compute, large):
    """``start(*args)``: starts ``compute(*args)`` beside the caller when ``large(*args)`` and there
    are two threads or more, else runs it now; returns a function giving its result."""

    def start(*args):
        if intra_op.total_threads() >= 2 and large(*args):  # a busy pool thread: joined here
            return intra_op.run_beside(compute, *args)
        value = compute(*args)
        return lambda: value

    return start
