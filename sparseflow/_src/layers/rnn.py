"""Running a cell over sequences: ``tf.nn.dynamic_rnn`` (a ``while_loop`` over TensorArrays),
``tf.nn.static_rnn`` (unrolled over a Python list), and their bidirectional forms.

With ``sequence_length``, steps past a row's length give zero outputs and carry its state through
unchanged, as TensorFlow does, so the final state is the state at each row's last step.

Example:
    >>> import numpy as np
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 5, 3])
    ...     out, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(4), x, sequence_length=[5, 2],
    ...                                    dtype=tf.float32)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         o, s = sess.run([out, state], {x: np.ones([2, 5, 3])})
    >>> o.shape, bool(np.all(o[1, 2:] == 0)), bool(np.allclose(o[1, 1], s[1]))
    ((2, 5, 4), True, True)
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph, name_scope
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, as_shape
from sparseflow._src.layers.rnn_cell_impl import concat_shape
from sparseflow._src.ops import array_ops, control_flow_ops, math_ops
from sparseflow._src.ops import functional_ops as nest
from sparseflow._src.ops import variable_scope as vs
from sparseflow._src.ops.constant_op import constant
from sparseflow._src.ops.core_ops import identity
from sparseflow._src.ops.math_cast_select import where
from sparseflow._src.ops.tensor_array_ops import TensorArray

__all__ = ["dynamic_rnn", "static_rnn", "bidirectional_dynamic_rnn", "static_bidirectional_rnn"]


def _assert_like_rnncell(name, cell):
    missing = [a for a in ("output_size", "state_size", "zero_state") if not hasattr(cell, a)]
    if not callable(cell):
        missing.append("is callable")
    if missing:
        raise TypeError(f"The argument {name!r} ({cell}) is not an RNNCell: "
                        f"{', '.join(repr(m) for m in missing)} is missing.")


def _transpose_batch_time(x):
    """Swaps the first two dimensions of a tensor of rank >= 2."""
    shape = x.shape
    if shape.ndims is not None and shape.ndims < 2:
        raise ValueError(f"Expected input tensor {x} to have rank at least 2, but saw shape: {shape}")
    if shape.ndims is None:
        rank = array_ops.rank(x)
        perm = array_ops.concat([[1, 0], array_ops.range(2, rank)], 0)
    else:
        perm = [1, 0] + list(range(2, shape.ndims))
    out = array_ops.transpose(x, perm)
    if shape.ndims is not None:
        dims = shape.as_list()
        out.set_shape([dims[1], dims[0]] + dims[2:])
    return out


def _best_effort_batch_size(flat_input):
    """The static batch size (dimension 1 of time-major inputs) or a dynamic one."""
    for x in flat_input:
        if x.shape.ndims is None:
            continue
        if x.shape.ndims < 2:
            raise ValueError(f"Input tensor should have rank >= 2, received shape: {x.shape}")
        if x.shape.as_list()[1] is not None:
            return x.shape.as_list()[1]
    return array_ops.shape(flat_input[0])[1]


def _state_dtype(explicit_dtype, state):
    if explicit_dtype is not None:
        return dtypes.as_dtype(explicit_dtype)
    flat = nest.flatten(state)
    if not flat:
        raise ValueError("Unable to infer dtype from empty state.")
    kinds = {s.dtype.base_dtype for s in flat}
    if len(kinds) != 1:
        raise ValueError(f"State has tensors of different inferred_dtypes. Unable to infer a single "
                         f"representative dtype. Dtypes received: {sorted(k.name for k in kinds)}")
    return flat[0].dtype.base_dtype


def _initial_state(cell, initial_state, batch_size, dtype, what):
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError(f"If no initial_state is provided, dtype must be specified ({what}).")
    if getattr(cell, "get_initial_state", None) is not None:
        return cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)
    return cell.zero_state(batch_size, dtype)


def _as_sequence_length(sequence_length):
    sequence_length = math_ops.cast(sequence_length, dtypes.int32)
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError(f"sequence_length must be a vector of length batch_size, but saw shape: "
                         f"{sequence_length.shape}")
    return identity(sequence_length, name="sequence_length")


def _copy_past_length(time, sequence_length, zero_output, state, new_output, new_state):
    """Outputs past each row's length are zeros, and its state is carried through unchanged."""
    done = time >= sequence_length

    def pick(old, new):
        if isinstance(new, TensorArray) or new.shape.ndims == 0:
            return new
        out = where(done, old, new)
        out.set_shape(new.shape)
        return out

    nest.assert_same_structure(zero_output, new_output)
    nest.assert_same_structure(state, new_state)
    return (nest.map_structure(pick, zero_output, new_output), nest.map_structure(pick, state, new_state))


def _zero_outputs(size, batch_size, dtype, static_batch):
    """Zeros ``[batch_size] + size``, with the static batch size when it is known."""
    z = array_ops.zeros(concat_shape(batch_size, size), dtype=dtype)
    z.set_shape([static_batch] + as_shape(size).as_list())
    return z


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None, parallel_iterations=None,
                swap_memory=False, time_major=False, scope=None):
    """Runs ``cell`` over the time steps of ``inputs`` in a ``while_loop``.

    ``inputs``: ``[batch, time, ...]`` (``[time, batch, ...]`` when ``time_major``), or a nested
    structure of such tensors. Returns ``(outputs, final_state)``; outputs have the layout of the
    inputs. Variables are created under ``scope`` (default ``"rnn"``).
    """
    _assert_like_rnncell("cell", cell)
    with vs.variable_scope(scope or "rnn"):
        flat_input = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        if not time_major:
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        parallel_iterations = parallel_iterations or 32
        if sequence_length is not None:
            sequence_length = _as_sequence_length(sequence_length)
        batch_size = _best_effort_batch_size(flat_input)
        state = _initial_state(cell, initial_state, batch_size, dtype, "dynamic_rnn")
        if sequence_length is not None:
            check = _check_sequence_length(sequence_length, batch_size)
            with get_default_graph().control_dependencies(check):
                sequence_length = identity(sequence_length, name="CheckSeqLen")
        inputs = nest.pack_sequence_as(inputs, flat_input)
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, state, parallel_iterations, sequence_length, dtype)
        if not time_major:
            outputs = nest.map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


def _check_sequence_length(sequence_length, batch_size):
    if not isinstance(batch_size, Tensor) and sequence_length.shape.ndims == 1:
        n = sequence_length.shape.as_list()[0]
        if n is not None and n != batch_size:
            raise ValueError(f"sequence_length has {n} entries, but the batch has {batch_size} rows: give one "
                             f"length per row.")
        if n is not None:
            return []
    from sparseflow._src.ops.control_flow_ops import Assert

    shape = array_ops.shape(sequence_length)
    ok = math_ops.reduce_all(math_ops.equal(shape, array_ops.stack([batch_size])))
    return [Assert(ok, ["Expected shape for Tensor sequence_length:0 is ", array_ops.stack([batch_size]),
                        " but saw shape: ", shape])]


def _dynamic_rnn_loop(cell, inputs, initial_state, parallel_iterations, sequence_length, dtype):
    state = initial_state
    flat_input = nest.flatten(inputs)
    flat_output_size = nest.flatten(cell.output_size)
    time_steps = array_ops.shape(flat_input[0])[0]
    batch_size = _best_effort_batch_size(flat_input)
    got_shapes = []
    for x in flat_input:
        if x.shape.ndims is not None and x.shape.ndims < 3:
            raise ValueError(f"Input size (depth of inputs) must be accessible via shape inference, but saw "
                             f"shape {x.shape}: inputs need at least 3 dimensions [time, batch, depth].")
        got_shapes.append(x.shape)
    for shape in got_shapes:
        if shape.ndims is not None and shape.as_list()[2] is None:
            raise ValueError("Input size (depth of inputs) must be accessible via shape inference, but saw "
                             "value None.")
    const_time = next((s.as_list()[0] for s in got_shapes if s.ndims is not None), None)
    const_batch = next((s.as_list()[1] for s in got_shapes if s.ndims is not None), None)
    out_dtype = _state_dtype(dtype, state)
    zero_output = None
    if sequence_length is not None:
        zero_output = nest.pack_sequence_as(
            cell.output_size, [_zero_outputs(size, batch_size, out_dtype, const_batch) for size in flat_output_size])
        max_len = math_ops.reduce_max(sequence_length)
    else:
        max_len = time_steps
    time = constant(0, dtype=dtypes.int32, name="time")
    with name_scope("dynamic_rnn") as base:
        output_tas = [TensorArray(out_dtype, size=time_steps, name=base + f"output_{i}",
                                  element_shape=TensorShape([const_batch]).concatenate(as_shape(size)))
                      for i, size in enumerate(flat_output_size)]
        input_tas = [TensorArray(x.dtype.base_dtype, size=time_steps, name=base + f"input_{i}",
                                 element_shape=x.shape[1:] if x.shape.ndims is not None else None).unstack(x)
                     for i, x in enumerate(flat_input)]

    def step(t, out_tas, st):
        input_t = []
        for ta, shape in zip(input_tas, got_shapes):
            x = ta.read(t)
            if shape.ndims is not None:
                x.set_shape(shape[1:])
            input_t.append(x)
        input_t = nest.pack_sequence_as(inputs, input_t)
        output, new_state = cell(input_t, st)
        if sequence_length is not None:
            output, new_state = _copy_past_length(t, sequence_length, zero_output, st, output, new_state)
        out_tas = [ta.write(t, o) for ta, o in zip(out_tas, nest.flatten(output))]
        return t + 1, out_tas, new_state

    loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, max_len))
    _, final_tas, final_state = control_flow_ops.while_loop(
        lambda t, *_: t < loop_bound, step, (time, output_tas, state), parallel_iterations=parallel_iterations,
        maximum_iterations=time_steps)
    final_outputs = []
    for ta, size in zip(final_tas, flat_output_size):
        out = ta.stack()
        out.set_shape(TensorShape([const_time, const_batch]).concatenate(as_shape(size)))
        final_outputs.append(out)
    return nest.pack_sequence_as(cell.output_size, final_outputs), final_state


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Runs ``cell`` over a Python list of ``[batch, depth]`` inputs, one unrolled step each.

    Returns ``(outputs, state)``: the list of step outputs and the final state.
    """
    _assert_like_rnncell("cell", cell)
    if not nest.is_sequence(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with vs.variable_scope(scope or "rnn") as varscope:
        first = inputs
        while nest.is_sequence(first):
            first = first[0]
        first = convert_to_tensor(first)
        fixed_batch = None
        if first.shape.ndims != 1:
            for x in nest.flatten(inputs):
                shape = convert_to_tensor(x).shape.with_rank_at_least(2)
                dims = shape.as_list()
                fixed_batch = fixed_batch if fixed_batch is not None else dims[0]
                for i, size in enumerate(dims[1:]):
                    if size is None:
                        raise ValueError(f"Input size (dimension {i} of inputs) must be accessible via shape "
                                         f"inference, but saw value None.")
        else:
            fixed_batch = first.shape.as_list()[0]
        batch_size = fixed_batch if fixed_batch is not None else array_ops.shape(first)[0]
        state = _initial_state(cell, initial_state, batch_size, dtype, "static_rnn")
        if sequence_length is not None:
            sequence_length = _as_sequence_length(sequence_length)
            zero_output = nest.pack_sequence_as(
                cell.output_size, [_zero_outputs(size, batch_size, _state_dtype(dtype, state), fixed_batch)
                                   for size in nest.flatten(cell.output_size)])
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            output, new_state = cell(input_, state)
            if sequence_length is not None:
                output, new_state = _copy_past_length(time, sequence_length, zero_output, state, output, new_state)
            state = new_state
            outputs.append(output)
        return outputs, state


def _reverse(x, seq_lengths, seq_axis, batch_axis):
    if seq_lengths is not None:
        return array_ops.reverse_sequence(input=x, seq_lengths=seq_lengths, seq_axis=seq_axis, batch_axis=batch_axis)
    return array_ops.reverse(x, axis=[seq_axis])


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None, initial_state_fw=None,
                              initial_state_bw=None, dtype=None, parallel_iterations=None, swap_memory=False,
                              time_major=False, scope=None):
    """A forward ``dynamic_rnn`` and one over the reversed sequences (reversed within each row's
    length). Returns ``((output_fw, output_bw), (state_fw, state_bw))``, both outputs in input order;
    variables under ``bidirectional_rnn/fw`` and ``bidirectional_rnn/bw``."""
    _assert_like_rnncell("cell_fw", cell_fw)
    _assert_like_rnncell("cell_bw", cell_bw)
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(cell_fw, inputs, sequence_length=sequence_length,
                                              initial_state=initial_state_fw, dtype=dtype,
                                              parallel_iterations=parallel_iterations, time_major=time_major,
                                              scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            reversed_inputs = nest.map_structure(
                lambda x: _reverse(convert_to_tensor(x), sequence_length, time_axis, batch_axis), inputs)
            tmp, state_bw = dynamic_rnn(cell_bw, reversed_inputs, sequence_length=sequence_length,
                                        initial_state=initial_state_bw, dtype=dtype,
                                        parallel_iterations=parallel_iterations, time_major=time_major,
                                        scope=bw_scope)
    output_bw = nest.map_structure(lambda x: _reverse(x, sequence_length, time_axis, batch_axis), tmp)
    return (output_fw, output_bw), (state_fw, state_bw)


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None, initial_state_bw=None, dtype=None,
                             sequence_length=None, scope=None):
    """``static_rnn`` forward and over the reversed list; outputs are the per-step concatenations
    ``[fw, bw]`` along the last axis. Returns ``(outputs, state_fw, state_bw)``."""
    _assert_like_rnncell("cell_fw", cell_fw)
    _assert_like_rnncell("cell_bw", cell_bw)
    if not nest.is_sequence(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, sequence_length,
                                             scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_list(inputs, sequence_length)
            tmp, state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype, sequence_length,
                                       scope=bw_scope)
    output_bw = _reverse_list(tmp, sequence_length)
    flat_fw, flat_bw = nest.flatten(output_fw), nest.flatten(output_bw)
    outputs = nest.pack_sequence_as(output_fw, [array_ops.concat([fw, bw], 1) for fw, bw in zip(flat_fw, flat_bw)])
    return outputs, state_fw, state_bw


def _reverse_list(seq, lengths):
    if lengths is None:
        return list(reversed(seq))
    flat = [nest.flatten(x) for x in seq]
    columns = []
    for parts in zip(*flat):
        stacked = array_ops.stack(list(parts))
        rev = array_ops.reverse_sequence(stacked, math_ops.cast(lengths, dtypes.int64), seq_axis=0, batch_axis=1)
        columns.append(array_ops.unstack(rev))
    return [nest.pack_sequence_as(seq[0], [col[t] for col in columns]) for t in range(len(seq))]
