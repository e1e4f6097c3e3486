"""Control flow as functional ops: ``tf.cond`` and ``tf.case`` build an ``If`` op, ``tf.while_loop``
a ``While`` op; each branch or body is a function graph that runs only when needed.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.int32, [])
    ...     y = tf.cond(x > 0, lambda: x * 10, lambda: -x)
    ...     i, total = tf.while_loop(lambda i, t: i < x, lambda i, t: (i + 1, t + i), [0, 0])
    ...     with tf.Session() as sess:
    ...         print(sess.run(y, {x: 4}), sess.run(total, {x: 4}), y.op.type, total.op.type)
    40 6 If While
"""

from __future__ import annotations

import collections
import functools

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Operation, Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, as_shape
from sparseflow._src.ops import functional_ops as fops
from sparseflow._src.ops.functional_ops import foldl, foldr, map_fn, scan
from sparseflow._src.ops.tensor_array_ops import TensorArray

__all__ = ["cond", "case", "switch_case", "while_loop", "Assert", "TensorArray", "foldl", "foldr", "scan",
           "map_fn"]

register_op("Case", inputs=["branch_index: int32", "input: Tin"], outputs=["output: Tout"],
            attrs=["Tin: list(type)", "Tout: list(type)", "branches: list(func)",
                   "output_shapes: list(shape) = []"],
            shape_fn=lambda op: list(op._attrs["output_shapes"]) or None, is_stateful=True)
register_op("Assert", inputs=["condition: bool", "data: T"], attrs=["T: list(type) >= 1", "summarize: int = 3"],
            shape_fn=lambda op: [], is_stateful=True)


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TensorFlow's public name
    """An op that raises InvalidArgumentError (showing ``data``) when run with ``condition`` false.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     op = tf.Assert(tf.constant(True), ["never shown"])
    >>> op.type, op.name
    ('Assert', 'Assert/Assert')
    """
    g = get_default_graph()
    with g.name_scope(name or "Assert"):
        attrs = {} if summarize is None else {"summarize": int(summarize)}
        return apply_op("Assert", [condition, list(data)], attrs, name="Assert")


# ---------------------------------------------------------------------- cond
def _unpack_singleton(x):
    if isinstance(x, (list, tuple)) and len(x) == 1:
        return x[0]
    return x


def _check_pred(pred):
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    pred = convert_to_tensor(pred, name="pred")
    if pred.dtype.base_dtype != dtypes.bool:
        raise TypeError(f"Input 'pred' of 'cond' has type {pred.dtype.base_dtype.name} that does not match "
                        f"expected type of bool.")
    if pred.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {pred.shape.ndims} for the predicate of a cond "
                         f"(pred {pred.name} has shape {pred.shape}).")
    return pred


def _build_branch(outer, fname, fn, branch_value: bool, what: str):
    """Runs ``fn()`` in a new function graph; returns (graph, structure, flat tensors, outer control ops)."""
    from sparseflow._src.ops import constant_op

    g = fops.ControlFlowGraph(fname, outer)
    outer_ops = []
    with g.as_default():
        result = fn()
        if result is None:
            raise ValueError(f"{what} must have a return value.")
        tensors = []
        for leaf in fops.flatten(result):
            if isinstance(leaf, Operation):
                if leaf.graph is not g:
                    outer_ops.append(leaf)
                    deps = []
                else:
                    deps = [leaf]
                with g.control_dependencies(deps):
                    tensors.append(constant_op.constant(branch_value, name="op_done"))
            else:
                tensors.extend(fops.inside(g, t) for t in fops.flatten_to_tensors(leaf))
    return g, result, tensors, outer_ops


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """``true_fn()`` if ``pred`` is true else ``false_fn()``; only the chosen branch runs.

    Branches return the same nested structure of tensors (ops and TensorArrays too); a result has
    the most specific shape compatible with both branches. Unless ``strict``, a one-element
    list/tuple result is returned as its element.
    """
    if fn1 is not None:
        if true_fn is not None:
            raise TypeError("cond(): true_fn and fn1 may not be set simultaneously.")
        true_fn = fn1
    if fn2 is not None:
        if false_fn is not None:
            raise TypeError("cond(): false_fn and fn2 may not be set simultaneously.")
        false_fn = fn2
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    g = get_default_graph()
    with g.name_scope(name or "cond") as scope:
        pred = _check_pred(pred)
        base = scope[:-1]
        graphs, results, flats, outer_ops = _build_branches(
            g, [(base + "_true", true_fn, True, "true_fn"), (base + "_false", false_fn, False, "false_fn")],
            "true_fn and false_fn")
        captured, tout, shapes = _finish_branches(graphs, flats)
        with g.control_dependencies(outer_ops):  # outer ops a branch returned run first
            op = apply_op("If", [pred, captured],
                          {"Tout": tout, "then_branch": graphs[0].name, "else_branch": graphs[1].name,
                           "output_shapes": shapes}, name=scope)
        result = _pack_branch_outputs(results[0], op.outputs)
        return result if strict else _unpack_singleton(result)


def _build_branches(outer, specs, what):
    """Builds each ``(name, fn, op_value, label)`` branch; checks they return one structure and dtypes."""
    graphs, results, flats, outer_ops = [], [], [], []
    for base, fn, value, label in specs:
        g, res, flat, ops = _build_branch(outer, fops.function_name(outer, base), fn, value, label)
        graphs.append(g)
        results.append(res)
        flats.append(flat)
        outer_ops.extend(ops)
    for res, flat in zip(results[1:], flats[1:]):
        try:
            fops.assert_same_structure(results[0], res)
        except TypeError as e:
            raise TypeError(f"Incompatible return types of {what}: {e}") from None
        except ValueError as e:
            raise ValueError(f"Incompatible return values of {what}: {e}") from None
        if len(flat) != len(flats[0]):
            raise ValueError(f"Incompatible return values of {what}: their sparse or TensorArray parts "
                             f"differ.")
        for x, y in zip(flats[0], flat):
            if x.dtype.base_dtype != y.dtype.base_dtype:
                raise ValueError(f"Outputs of {what} must have the same type: {x.dtype.base_dtype.name}, "
                                 f"{y.dtype.base_dtype.name}")
    return graphs, results, flats, outer_ops


def _finish_branches(graphs, flats):
    """Registers the branch functions (same captured inputs for all); returns (captured, Tout, shapes)."""
    captured = fops.capture_all(graphs)
    for g, flat in zip(graphs, flats):
        fops.make_function(g, [], flat)
    shapes = []
    for outs in zip(*flats):
        shape = outs[0].shape
        for t in outs[1:]:
            shape = shape.most_specific_compatible_shape(t.shape)
        shapes.append(shape)
    return captured, [t.dtype.base_dtype for t in flats[0]], shapes


def _pack_branch_outputs(template, outputs):
    outs = iter(outputs)
    leaves = []
    for leaf in fops.flatten(template):
        if isinstance(leaf, Operation):
            leaves.append(next(outs))
        else:
            n = len(fops.flatten_to_tensors(leaf, convert=False))
            leaves.append(fops.pack_from_tensors(leaf, [next(outs) for _ in range(n)]))
    return fops.pack_sequence_as(template, leaves)


# ---------------------------------------------------------------------- case
def _case_args(pred_fn_pairs, exclusive):
    if isinstance(pred_fn_pairs, collections.OrderedDict):
        pairs = list(pred_fn_pairs.items())
    elif isinstance(pred_fn_pairs, dict):  # TensorFlow orders a plain dict by predicate name
        pairs = sorted(pred_fn_pairs.items(), key=lambda kv: getattr(kv[0], "name", str(kv[0])))
    elif isinstance(pred_fn_pairs, (list, tuple)):
        pairs = list(pred_fn_pairs)
    else:
        raise TypeError("fns must be a list, tuple, or dict")
    preds, fns = [], []
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in pred_fn_pairs must be a 2-tuple, got {pair!r}")
        p, f = pair
        if isinstance(p, bool):
            raise TypeError("pred must not be a Python bool")
        p = convert_to_tensor(p)
        if p.dtype.base_dtype != dtypes.bool:
            raise TypeError(f"pred must be Tensor of type bool: {p.name}")
        if not callable(f):
            raise TypeError(f"fn for pred {p.name} must be callable.")
        preds.append(p)
        fns.append(f)
    return preds, fns


def _count_true(preds):
    from sparseflow._src.ops import array_ops, math_ops

    return math_ops.reduce_sum(math_ops.cast(array_ops.stack(preds), dtypes.int32))


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The result of the function paired with the first true predicate (``default`` if none is).

    ``pred_fn_pairs`` is a list of ``(pred, fn)`` or a dict ``{pred: fn}``. With ``exclusive`` an
    error is raised at run time if more than one predicate is true. Without ``default`` the last
    pair acts as the default and an error is raised if no predicate is true.
    """
    from sparseflow._src.ops import array_ops

    preds, fns = _case_args(pred_fn_pairs, exclusive)
    g = get_default_graph()
    with g.name_scope(name or "case"):
        if default is None:
            if not preds:
                raise ValueError("pred_fn_pairs must not be empty when there is no default.")
            last_pred, last_fn = preds[-1], fns[-1]
            others = preds[:-1]

            def default_fn():
                checks = [Assert(last_pred, ["Input error: None of conditions evaluated as True:",
                                             array_ops.stack(preds, name="preds_c")])]
                if others:
                    checks.append(Assert(_count_true(others) <= 0,
                                         [f"Implementation error: selected default action #{len(others)} was "
                                          f"called, but some of other predicates are True: ",
                                          array_ops.stack(others, name="preds_c")]))
                with get_default_graph().control_dependencies(checks):
                    return last_fn()

            default, preds, fns = default_fn, others, fns[:-1]
        elif not callable(default):
            raise TypeError("default must be callable.")
        fn = default
        for p, f in reversed(list(zip(preds, fns))):
            fn = functools.partial(cond, p, f, fn, strict=strict)
        if exclusive and len(preds) > 1:
            msg = "Input error: exclusive=True: more than 1 conditions evaluated as True:"
            check = Assert(_count_true(preds) <= 1, [msg, array_ops.stack(preds, name="preds_c")])
            with g.control_dependencies([check]):
                return fn()
        return fn()


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """The result of ``branch_fns[branch_index]()`` (a ``Case`` op); an index out of range runs
    ``default`` (or the last branch when there is none).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     i = tf.placeholder(tf.int32, [])
    ...     y = tf.switch_case(i, [lambda: tf.constant(10), lambda: tf.constant(20)],
    ...                        default=lambda: tf.constant(-1))
    ...     print(sess.run(y, {i: 1}), sess.run(y, {i: 7}), y.op.type)
    20 -1 Case
    """
    if not isinstance(branch_index, Tensor):
        raise TypeError(f"branch_index must a Tensor, got {type(branch_index)}")
    if not branch_index.dtype.is_integer:
        raise TypeError(f"branch_index must an integer Tensor, got {branch_index.dtype}")
    if not branch_fns:
        raise ValueError("Must provide at least one item in branch_fns")
    if not isinstance(branch_fns, (list, tuple, dict)):
        raise TypeError("branch_fns must be a list, tuple, or dict")
    pairs = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if all(callable(f) for f in pairs):
        pairs = list(enumerate(pairs))
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], int)
                and callable(pair[1])):
            raise TypeError(f"Each entry in branch_fns must be an (int, callable) pair, got {pair!r}")
    keys = sorted(k for k, _ in pairs)
    if keys != list(range(len(keys))):
        raise ValueError(f"branch indices (keys) must form contiguous range of [0 to {len(keys)}) but found "
                         f"{{{','.join(map(str, keys))}}}")
    fns = [f for _, f in sorted(pairs, key=lambda kv: kv[0])] + ([default] if default is not None else [])
    g = get_default_graph()
    with g.name_scope(name or "switch_case") as scope:
        index = branch_index
        if index.dtype.base_dtype != dtypes.int32:
            from sparseflow._src.ops import math_ops

            index = math_ops.cast(index, dtypes.int32)
        base = scope[:-1]
        graphs, results, flats, outer_ops = _build_branches(
            g, [(f"{base}_branch{i}", f, True, f"branch {i}") for i, f in enumerate(fns)], "the branches")
        captured, tout, shapes = _finish_branches(graphs, flats)
        with g.control_dependencies(outer_ops):
            op = apply_op("Case", [index, captured], {"Tout": tout, "branches": [x.name for x in graphs],
                                                      "output_shapes": shapes}, name=scope)
        return _pack_branch_outputs(results[0], op.outputs)


# ---------------------------------------------------------------------- while_loop
def _shape_leq(a: TensorShape, b: TensorShape) -> bool:
    """``a`` is at least as specific as ``b``."""
    if b.ndims is None:
        return True
    if a.ndims != b.ndims:
        return False
    return all(y is None or x == y for x, y in zip(a.as_list(), b.as_list()))


def _invariants(loop_vars, flat_vars, shape_invariants):
    if shape_invariants is None:
        return [t.shape for t in flat_vars]
    fops.assert_same_structure(loop_vars, shape_invariants, check_types=False)
    shapes = []
    for var, inv in zip(fops.flatten(loop_vars), fops.flatten(shape_invariants)):
        if isinstance(var, TensorArray):
            shapes.append(TensorShape([]))
            continue
        parts = fops.flatten_to_tensors(var)
        if len(parts) > 1:  # sparse: invariant on the dense shape
            rank = as_shape(inv).ndims
            shapes.extend([TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])])
            continue
        inv = as_shape(inv)
        if not _shape_leq(parts[0].shape, inv):
            raise ValueError(f"The shape invariant specified for {parts[0].name} is not compatible with the "
                             f"initial shape of the loop variable. It enters the loop with shape "
                             f"{parts[0].shape}, but the specified shape invariant is {inv}.")
        shapes.append(inv)
    return shapes


def _loop_graph(outer, name, loop_vars, dts, shapes):
    from sparseflow._src.ops import constant_op

    g = fops.ControlFlowGraph(name, outer)
    with g.as_default():
        phs = [constant_op.placeholder(dt, shape, name="loop_var") for dt, shape in zip(dts, shapes)]
        packed = fops.pack_from_tensors(loop_vars, phs)
    return g, phs, packed


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, name=None, maximum_iterations=None, return_same_structure=False):
    """Repeats ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``; returns the final values.

    ``loop_vars`` is a (nested) list/tuple of tensors and TensorArrays. Each body result must keep
    its loop variable's dtype and shape unless ``shape_invariants`` gives a less specific shape.
    ``maximum_iterations`` bounds the number of iterations. Unless ``return_same_structure``, a
    single loop variable is returned as itself.
    """
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    if not isinstance(loop_vars, (list, tuple)):
        loop_vars = [loop_vars]
    if not loop_vars:
        raise ValueError("No loop variables provided")
    g = get_default_graph()
    with g.name_scope(name or "while") as scope:
        loop_vars = fops.map_structure(_as_loop_value, loop_vars)
        try_to_pack = len(loop_vars) == 1 and not return_same_structure
        if maximum_iterations is not None:
            cond, body, loop_vars, shape_invariants = _bound_iterations(
                cond, body, loop_vars, shape_invariants, maximum_iterations, try_to_pack)
            try_to_pack = False
        flat_vars = fops.flatten_to_tensors(loop_vars)
        shapes = _invariants(loop_vars, flat_vars, shape_invariants)
        dts = [t.dtype.base_dtype for t in flat_vars]
        base = scope[:-1]

        cond_g, cond_in, cond_args = _loop_graph(g, fops.function_name(g, base + "_cond"), loop_vars, dts,
                                                 shapes)
        with cond_g.as_default():
            c = convert_to_tensor(cond(*cond_args))
            c = fops.inside(cond_g, c)
        if c.dtype.base_dtype != dtypes.bool or c.shape.ndims not in (None, 0):
            raise ValueError(f"The loop condition must be a scalar bool tensor, got "
                             f"{c.dtype.base_dtype.name} with shape {c.shape}.")

        body_g, body_in, body_args = _loop_graph(g, fops.function_name(g, base + "_body"), loop_vars, dts,
                                                 shapes)
        with body_g.as_default():
            result = body(*body_args)
            if not isinstance(result, (list, tuple, dict)):
                result = [result]
            fops.assert_same_structure(list(loop_vars), list(result) if isinstance(result, (list, tuple))
                                       else result, check_types=False)
            out = [fops.inside(body_g, t) for t in fops.flatten_to_tensors(result)]
        _check_body_outputs(flat_vars, out, shapes)

        captured = fops.capture_all([cond_g, body_g])
        fops.make_function(cond_g, cond_in, [c])
        fops.make_function(body_g, body_in, out + list(body_g.captures.values()))
        op = apply_op("While", [flat_vars + captured],
                      {"cond": cond_g.name, "body": body_g.name,
                       "parallel_iterations": int(parallel_iterations),
                       "output_shapes": shapes + [t.shape for t in captured]}, name=scope)
        if not back_prop:  # TF gives no gradient through such a loop
            op._set_attr("_back_prop", False)
        exits = op.outputs[:len(flat_vars)]
        packed = fops.pack_from_tensors(result, exits)
        if not return_same_structure and len(exits) == 1:
            packed = packed[0]
        return packed[1] if maximum_iterations is not None else packed


def _as_loop_value(v):
    if isinstance(v, TensorArray) or hasattr(v, "_is_sparse_tensor"):
        return v
    return convert_to_tensor(v)


def _is_single(x):
    return isinstance(x, (list, tuple)) and len(x) == 1


def _bound_iterations(cond, body, loop_vars, shape_invariants, maximum_iterations, try_to_pack):
    """Adds an iteration counter that stops the loop after ``maximum_iterations``."""
    from sparseflow._src.ops import constant_op, math_ops

    limit = convert_to_tensor(maximum_iterations, name="maximum_iterations")
    if limit.shape.ndims != 0:
        raise ValueError(f"maximum_iterations must be a scalar, saw shape: {limit.shape}")
    counter = constant_op.constant(0, dtype=limit.dtype, name="iteration_counter")
    orig_cond, orig_body = cond, body
    if try_to_pack:
        loop_vars = (counter, loop_vars[0])

        def cond(i, lv):
            return math_ops.logical_and(i < limit, orig_cond(lv))

        def body(i, lv):
            r = orig_body(lv)
            return (i + 1, r[0] if _is_single(r) and not isinstance(lv, (list, tuple)) else r)
    else:
        loop_vars = (counter, loop_vars)

        def cond(i, lv):
            return math_ops.logical_and(i < limit, orig_cond(*lv))

        def body(i, lv):
            return (i + 1, orig_body(*lv))
    if shape_invariants is not None:
        shape_invariants = (TensorShape([]), shape_invariants)
    return cond, body, loop_vars, shape_invariants


def _check_body_outputs(flat_vars, out, shapes):
    if len(out) != len(flat_vars):
        raise ValueError(f"Number of inputs and outputs of body must match loop_vars: {len(flat_vars)}, "
                         f"{len(out)}")
    for v, o, inv in zip(flat_vars, out, shapes):
        if o.dtype.base_dtype != v.dtype.base_dtype:
            raise TypeError(f"Loop var {v.name} enters the loop with type {v.dtype.base_dtype.name}, but "
                            f"has type {o.dtype.base_dtype.name} after 1 iteration.")
        if not _shape_leq(o.shape, inv):
            raise ValueError(f"Input tensor '{v.name}' enters the loop with shape {inv}, but has shape "
                             f"{o.shape} after one iteration. To allow the shape to vary across iterations, "
                             f"use the `shape_invariants` argument of tf.while_loop to specify a "
                             f"less-specific shape.")

