"""Gradient of ``While`` (``tf.while_loop``), like TF2's while_v2.

The forward loop gets an iteration counter and, for every forward body tensor the gradient body
uses, a tensor-list accumulator written at each iteration (both are new loop variables of the
forward ``While``). The gradient is a second ``While`` that runs the iterations backwards: its
body differentiates the forward body with the values of that iteration read back from the
accumulators, carries the gradients of the loop variables, and sums the gradients of the
captured (loop-invariant) tensors.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant(2.0)
    ...     _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * v), [0, x])
    ...     print([float(v) for v in sess.run([y, tf.gradients(y, x)[0]])])
    [256.0, 1024.0]
"""

from __future__ import annotations

import weakref

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.grad import grad_func_graph as gfg
from sparseflow._src.grad.gradients_util import gradients_helper, input_needs_gradient, is_trainable
from sparseflow._src.grad.registry import RegisterGradient
from sparseflow._src.ops import functional_ops as fops


class _WhileState:
    """What the gradient added to one forward While: its counter and accumulators."""

    def __init__(self):
        self.counter_ph = None  # body input placeholder of the iteration counter
        self.counter_out = None  # While output: the number of iterations run
        self.accumulators: dict = {}  # forward body tensor -> While output (its per-iteration list)


_STATE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _functions(op):
    return gfg.library_function(op, op._attrs["cond"]), gfg.library_function(op, op._attrs["body"])


def _add_loop_var(op, init, shape, make_body_output):
    """Adds a loop variable to forward While ``op``; returns (body placeholder, While output)."""
    cond_fn, body_fn = _functions(op)
    k = len(body_fn.inputs)
    dt = init.dtype.base_dtype
    cond_ph = gfg.placeholder_like(cond_fn.graph, dt, shape, name="grad_loop_var")
    body_ph = gfg.placeholder_like(body_fn.graph, dt, shape, name="grad_loop_var")
    body = body_fn.graph
    with body.as_default(), body.control_dependencies(None), body.name_scope(None):
        new_out = make_body_output(body_ph)
    cond_fn.inputs.append(cond_ph)
    body_fn.inputs.append(body_ph)
    body_fn.outputs.insert(k, new_out)
    out = gfg.insert_input_output(op, k, init, shape)
    return body_ph, out


def _in_op_graph(op):
    """Context for building the initial value of a new loop variable next to ``op``."""
    import contextlib

    g = op.graph

    @contextlib.contextmanager
    def ctx():
        with g.as_default(), g.control_dependencies(None), g.colocate_with(None, ignore_existing=True), \
                g.name_scope(op.name + "/grad_acc/"):
            yield

    return ctx()


def _ensure_counter(op, state):
    from sparseflow._src.ops import constant_op

    if state.counter_out is None:
        with _in_op_graph(op):
            init = constant_op.constant(0, dtype=dtypes.int32, name="counter")
        state.counter_ph, state.counter_out = _add_loop_var(op, init, TensorShape([]), lambda ph: ph + 1)
    return state.counter_out


def _accumulator(op, state, t):
    """The While output holding the list of ``t``'s value at every iteration (added on demand)."""
    from sparseflow._src.ops.tensor_array_ops import build_element_shape

    out = state.accumulators.get(t)
    if out is not None:
        return out
    _ensure_counter(op, state)
    dt = t.dtype.base_dtype
    with _in_op_graph(op):
        init = apply_op("TensorListReserve", [build_element_shape(None), 0], {"element_dtype": dt},
                        name="accumulator").outputs[0]

    def write(ph):
        return apply_op("TensorListSetItem", [ph, state.counter_ph, t],
                        {"resize_if_index_out_of_bounds": True}, name="accumulate").outputs[0]

    _, out = _add_loop_var(op, init, TensorShape([]), write)
    state.accumulators[t] = out
    return out


def _reaches(body, start, targets) -> bool:
    """Whether any op in ``targets`` is reachable from tensor ``start`` along trainable tensors."""
    seen, stack = set(), [start]
    while stack:
        t = stack.pop()
        for c in t.consumers():
            if c in targets:
                return True
            if c not in seen and c.graph is body:
                seen.add(c)
                stack.extend(o for o in c.outputs if is_trainable(o))
    return False


def _carried(body_fn, loop_phs, out_grads):
    """Loop variables whose gradient the backward loop carries: those with an output gradient and
    those that feed one. Accumulators count too: a higher-order gradient flows into them."""
    cand = [j for j, ph in enumerate(loop_phs) if is_trainable(ph)]
    carried = {j for j in cand if out_grads[j] is not None}
    changed = True
    while changed:
        changed = False
        targets = {body_fn.outputs[j].op for j in carried}
        for j in cand:
            if j not in carried and _reaches(body_fn.graph, loop_phs[j], targets):
                carried.add(j)
                changed = True
    return sorted(carried)


def _zero_list(handle):
    from sparseflow._src.ops.tensor_array_ops import build_element_shape

    n = apply_op("TensorListLength", [handle]).outputs[0]
    return apply_op("TensorListReserve", [build_element_shape(None), n],
                    {"element_dtype": dtypes.float32}).outputs[0]


def _zeros(x):
    from sparseflow._src.ops import array_ops

    if x.dtype.base_dtype == dtypes.variant:
        return _zero_list(x)
    if x.shape.is_fully_defined():
        return array_ops.zeros(x.shape, dtype=x.dtype.base_dtype)
    return array_ops.zeros_like(x)


def _add(a, b):
    from sparseflow._src.ops import math_ops

    return math_ops.add_n([a, b]) if a.dtype.base_dtype == dtypes.variant else a + b


@RegisterGradient("While")
def _while_grad(op, *out_grads):
    cond_fn, body_fn = _functions(op)
    state = _STATE.setdefault(op, _WhileState())
    n_inputs = len(op.inputs)
    k = len(body_fn.inputs)
    body = body_fn.graph
    loop_phs = list(body_fn.inputs)
    cap_phs = body_fn.captured_placeholders
    cap_outer = list(op.inputs[k:])
    out_grads = [gfg.densify(g) for g in out_grads] + [None] * (len(op.outputs) - len(out_grads))
    result = [None] * n_inputs
    if op._attrs.get("_back_prop") is False:  # tf.while_loop(back_prop=False): no gradient, like TF
        return result
    need_caps = [i for i, ph in enumerate(cap_phs) if is_trainable(ph) and input_needs_gradient(op, k + i)]
    carried = _carried(body_fn, loop_phs, out_grads)
    if not carried:
        for i in need_caps:
            result[k + i] = out_grads[k + i]
        return result
    shapes_attr = list(op._attrs.get("output_shapes") or ())
    dv_shapes = [shapes_attr[j] if j < len(shapes_attr) else loop_phs[j].shape for j in carried]
    dv_init = [out_grads[j] if out_grads[j] is not None else _zeros(op.outputs[j]) for j in carried]
    dc_init = [out_grads[k + i] if out_grads[k + i] is not None else _zeros(cap_outer[i]) for i in need_caps]
    n_iter = _ensure_counter(op, state)
    outer = get_default_graph()
    dts = [dtypes.int32] + [t.dtype.base_dtype for t in dv_init + dc_init]
    shapes = [TensorShape([])] + dv_shapes + [cap_outer[i].shape for i in need_caps]
    cap_index = {ph: i for i, ph in enumerate(cap_phs)}
    holder = {}

    def resolve(t):
        from sparseflow._src.ops import constant_op
        from sparseflow._src.ops.tensor_array_ops import build_element_shape

        i = cap_index.get(t)
        if i is not None:
            return gb._capture(cap_outer[i])
        if t.op.type == "Const":
            return constant_op.constant(constant_value(t), dtype=t.dtype.base_dtype, name="forward_const")
        lst = gb._capture(_accumulator(op, state, t))
        item = apply_op("TensorListGetItem", [lst, holder["index"], build_element_shape(t.shape)],
                        {"element_dtype": t.dtype.base_dtype}, name="forward_value").outputs[0]
        item.set_shape(t.shape)
        return item

    base = body_fn.name
    gc = fops.ControlFlowGraph(fops.function_name(outer, base + "_grad_cond"), outer)
    gc_phs = [gfg.placeholder_like(gc, dt, s, name="loop_var") for dt, s in zip(dts, shapes)]
    with gc.as_default():
        keep_going = gc_phs[0] > 0
    gb = gfg.GradFuncGraph(fops.function_name(outer, base + "_grad"), outer, body, resolve)
    gb_phs = [gfg.placeholder_like(gb, dt, s, name="loop_var") for dt, s in zip(dts, shapes)]
    n_dv = len(carried)
    with gb.as_default():
        remaining = gb_phs[0]
        holder["index"] = remaining - 1
        dv_phs, dc_phs = gb_phs[1:1 + n_dv], gb_phs[1 + n_dv:]
        ys = [body_fn.outputs[j] for j in carried]
        xs = [loop_phs[j] for j in carried] + [cap_phs[i] for i in need_caps]
        grads = [gfg.densify(g) for g in gradients_helper(ys, xs, grad_ys=dv_phs)]
        new_dv = []
        for j, g in zip(carried, grads[:n_dv]):
            new_dv.append(g if g is not None else _zeros(gb._capture(loop_phs[j])))
        new_dc = [dc if g is None else _add(dc, g) for dc, g in zip(dc_phs, grads[n_dv:])]
        outs = [fops.inside(gb, t) for t in [holder["index"]] + new_dv + new_dc]
    captured = fops.capture_all([gc, gb])
    fops.make_function(gc, gc_phs, [keep_going])
    fops.make_function(gb, gb_phs, outs + list(gb.captures.values()))
    grad_op = apply_op("While", [[n_iter] + dv_init + dc_init + captured],
                       {"cond": gc.name, "body": gb.name,
                        "parallel_iterations": op._attrs.get("parallel_iterations", 10),
                        "output_shapes": shapes + [t.shape for t in captured]}, name="while")
    for idx, j in enumerate(carried):
        result[j] = grad_op.outputs[1 + idx]
    for idx, i in enumerate(need_caps):
        result[k + i] = grad_op.outputs[1 + n_dv + idx]
    return result
