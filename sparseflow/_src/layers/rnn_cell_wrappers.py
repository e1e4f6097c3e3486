"""Cell wrappers of ``tf.nn.rnn_cell``: ``DropoutWrapper``, ``ResidualWrapper``, ``DeviceWrapper``.

A wrapper adds no variable scope of its own: the wrapped cell's variables keep their names
(``rnn/basic_lstm_cell/kernel`` with or without dropout), as in TensorFlow.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(3), output_keep_prob=0.5, seed=1)
    ...     out, _ = tf.nn.dynamic_rnn(cell, tf.ones([2, 4, 5]), dtype=tf.float32)
    ...     names = [v.op.name for v in tf.global_variables()]
    >>> names
    ['rnn/basic_rnn_cell/kernel', 'rnn/basic_rnn_cell/bias']
"""

from __future__ import annotations

import hashlib
import numbers

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph, name_scope
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.layers.rnn_cell_impl import LSTMStateTuple, RNNCell
from sparseflow._src.ops import array_ops, math_ops, random_ops
from sparseflow._src.ops import functional_ops as nest
from sparseflow._src.ops.nn_dropout_ops import dropout
from sparseflow._src.ops.tensor_array_ops import TensorArray

__all__ = ["DropoutWrapper", "ResidualWrapper", "DeviceWrapper"]


def _is_size_leaf(x):
    return not nest.is_sequence(x) or isinstance(x, TensorShape)


def _flatten_sizes(sizes):
    """Leaves of a nested state/output size (a TensorShape is one leaf)."""
    if _is_size_leaf(sizes):
        return [sizes]
    return [leaf for s in nest._children(sizes) for leaf in _flatten_sizes(s)]


def _traverse_shallow(visitor, structure):
    """The bool structure saying where to descend (``nest.get_traverse_shallow_structure``)."""
    choice = visitor(structure)
    if not nest.is_sequence(structure):
        if not isinstance(choice, bool):
            raise TypeError(f"dropout_state_filter_visitor returned a structure ({choice}) for the leaf "
                            f"{structure}: it must return True or False for a tensor.")
        return choice
    if isinstance(choice, bool):
        if not choice:
            return False
        return nest._rebuild(structure, [_traverse_shallow(visitor, b) for b in nest._children(structure)])
    kids = []
    for t, branch in zip(nest._children(choice), nest._children(structure)):
        if not isinstance(t, bool):
            raise TypeError(f"dropout_state_filter_visitor returned {choice}: its entries must be bools.")
        kids.append(_traverse_shallow(visitor, branch) if t else False)
    return nest._rebuild(structure, kids)


def _up_to(shallow, structure):
    """The subtrees of ``structure`` at the leaves of ``shallow``."""
    if not nest.is_sequence(shallow):
        return [structure]
    return [x for s, b in zip(nest._children(shallow), nest._children(structure)) for x in _up_to(s, b)]


def _pack_up_to(shallow, flat):
    it = iter(flat)

    def build(s):
        if not nest.is_sequence(s):
            return next(it)
        return nest._rebuild(s, [build(c) for c in nest._children(s)])

    return build(shallow)


def _default_state_filter(substate):
    """Drops out every state tensor except an LSTM's cell state ``c``."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    if isinstance(substate, TensorArray):
        return False
    return True


class _Wrapper(RNNCell):
    """A cell that calls another cell, adding no variable scope of its own."""

    def __init__(self, cell, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        for attr in ("output_size", "state_size", "zero_state"):
            if not hasattr(cell, attr) or not callable(cell):
                raise TypeError(f"The argument 'cell' ({cell}) is not an RNNCell: '{attr}' is missing.")
        self.cell = cell

    def __call__(self, inputs, state, scope=None):
        return self._call_wrapped_cell(inputs, state, cell_call_fn=self.cell.__call__, scope=scope)

    @property
    def state_size(self):
        return self.cell.state_size

    @property
    def output_size(self):
        return self.cell.output_size

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            return self.cell.zero_state(batch_size, dtype)

    @property
    def trainable_weights(self):
        return list(self.cell.trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self):
        return list(self.cell.non_trainable_weights)

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def weights(self):
        return self.cell.weights

    variables = weights


class DropoutWrapper(_Wrapper):
    """Dropout on a cell's inputs, outputs and states (``*_keep_prob``; 1.0 means none).

    ``variational_recurrent=True`` uses one mask per sequence for every step (it needs ``dtype``,
    and ``input_size`` when inputs are dropped). ``seed`` derives each mask's op seed as TensorFlow
    does. By default an LSTM's cell state ``c`` is never dropped (``dropout_state_filter_visitor``).
    """

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None, **kwargs):
        super().__init__(cell, dtype=dtype, **kwargs)
        if dropout_state_filter_visitor is not None and not callable(dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable")
        self._dropout_state_filter = dropout_state_filter_visitor or _default_state_filter
        with name_scope("DropoutWrapperInit"):
            for prob, attr in ((input_keep_prob, "input_keep_prob"), (state_keep_prob, "state_keep_prob"),
                               (output_keep_prob, "output_keep_prob")):
                tensor = convert_to_tensor(prob)
                const = constant_value(tensor)
                if const is not None:
                    if const < 0 or const > 1:
                        raise ValueError(f"Parameter {attr} must be between 0 and 1: {float(const)}")
                    setattr(self, f"_{attr}", float(const))
                else:
                    setattr(self, f"_{attr}", tensor)
        self._variational_recurrent = variational_recurrent
        self._input_size = input_size
        self._seed = seed
        self._recurrent_input_noise = self._recurrent_state_noise = self._recurrent_output_noise = None
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")
            dtype = dtypes.as_dtype(dtype)

            def noise(sizes, prefix):
                flat = [random_ops.random_uniform(array_ops.concat([[1], TensorShape(s).as_list()], 0),
                                                  seed=self._gen_seed(prefix, i), dtype=dtype)
                        for i, s in enumerate(_flatten_sizes(sizes))]
                return flat

            if not isinstance(self._input_keep_prob, numbers.Real) or self._input_keep_prob < 1.0:
                if input_size is None:
                    raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 or is unknown, "
                                     "input_size must be provided")
                self._recurrent_input_noise = noise(input_size, "input")
            self._recurrent_state_noise = noise(cell.state_size, "state")
            self._recurrent_output_noise = noise(cell.output_size, "output")

    def _gen_seed(self, salt_prefix, index):
        if self._seed is None:
            return None
        text = (str(self._seed) + f"{salt_prefix}_{index}").encode("utf-8")
        return int(hashlib.md5(text).hexdigest()[:8], 16) & 0x7FFFFFFF  # noqa: S324 - a seed, not security

    def _dropout(self, values, salt_prefix, recurrent_noise, keep_prob, shallow=None):
        shallow = values if shallow is None else shallow
        flags = nest.flatten(shallow) if nest.is_sequence(shallow) else [shallow]
        parts = _up_to(shallow, values)
        out = []
        for i, (flag, v) in enumerate(zip(flags, parts)):
            if isinstance(flag, bool) and not flag:
                out.append(v)
            elif not self._variational_recurrent:
                out.append(dropout(v, rate=1.0 - keep_prob, seed=self._gen_seed(salt_prefix, i)))
            else:
                binary = math_ops.floor(keep_prob + recurrent_noise[i])
                ret = math_ops.divide(v, keep_prob) * binary
                ret.set_shape(v.shape)
                out.append(ret)
        return _pack_up_to(shallow, out) if nest.is_sequence(shallow) else out[0]

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        def should_dropout(p):
            return not isinstance(p, float) or p < 1

        if should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._recurrent_input_noise, self._input_keep_prob)
        output, new_state = cell_call_fn(inputs, state, **kwargs)
        if should_dropout(self._state_keep_prob):
            shallow = _traverse_shallow(self._dropout_state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._recurrent_state_noise, self._state_keep_prob,
                                      shallow)
        if should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._recurrent_output_noise, self._output_keep_prob)
        return output, new_state


class ResidualWrapper(_Wrapper):
    """Adds the cell's inputs to its outputs (or applies ``residual_fn(inputs, outputs)``)."""

    def __init__(self, cell, residual_fn=None, **kwargs):
        super().__init__(cell, **kwargs)
        self._residual_fn = residual_fn

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        outputs, new_state = cell_call_fn(inputs, state, **kwargs)

        def default_residual_fn(inputs, outputs):
            nest.assert_same_structure(inputs, outputs)

            def add(inp, out):
                inp = convert_to_tensor(inp)
                inp.shape.assert_is_compatible_with(out.shape)
                return inp + out

            return nest.map_structure(add, inputs, outputs)

        return (self._residual_fn or default_residual_fn)(inputs, outputs), new_state


class DeviceWrapper(_Wrapper):
    """Runs the cell (and builds its zero state) on ``device``."""

    def __init__(self, cell, device, **kwargs):
        super().__init__(cell, **kwargs)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"), get_default_graph().device(self._device):
            return self.cell.zero_state(batch_size, dtype)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        with get_default_graph().device(self._device):
            return cell_call_fn(inputs, state, **kwargs)
