"""``tf.nn.rnn_cell``: TF1's recurrent cells (``BasicRNNCell``, ``GRUCell``, ``BasicLSTMCell``,
``LSTMCell``) and ``MultiRNNCell``, as layers whose variables carry TensorFlow's names.

A cell is a layer called as ``output, new_state = cell(inputs, state)``; it creates its variables
on the first call in a variable scope named after its class under the current scope
(``rnn/basic_lstm_cell/kernel``, ``rnn/multi_rnn_cell/cell_0/gru_cell/gates/bias``), so TF1
checkpoints of these models restore here and ours into TensorFlow.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    ...     state = cell.zero_state(2, tf.float32)
    ...     out, new_state = cell(tf.ones([2, 3]), state)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(out).shape, [v.op.name for v in cell.trainable_variables])
    (2, 4) ['basic_lstm_cell/kernel', 'basic_lstm_cell/bias']
"""

from __future__ import annotations

import collections

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, as_shape
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.layers.base import InputSpec, Layer
from sparseflow._src.ops import array_ops, init_ops, math_ops
from sparseflow._src.ops import functional_ops as nest
from sparseflow._src.ops import variable_scope as vs
from sparseflow._src.ops import variables as variables_mod
from sparseflow._src.ops.nn_activation_ops import bias_add
from sparseflow._src.ops.partitioned_variables import fixed_size_partitioner

__all__ = ["RNNCell", "LayerRNNCell", "BasicRNNCell", "GRUCell", "BasicLSTMCell", "LSTMCell", "LSTMStateTuple",
           "MultiRNNCell", "concat_shape", "zero_state_tensors"]

_WEIGHTS = "kernel"
_BIAS = "bias"


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """The (cell state ``c``, output ``h``) pair of an LSTM cell with ``state_is_tuple=True``."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def concat_shape(prefix, suffix, static=False):
    """``prefix`` (a batch size: int or scalar tensor) followed by ``suffix`` (an int or shape).

    Static: a list with None for unknown sizes; otherwise an int32 shape tensor.
    """
    if isinstance(prefix, Tensor):
        p_static = constant_value(prefix)
        p_static = [None] if p_static is None else [int(v) for v in TensorShape(p_static.reshape(-1)).as_list()]
        p = array_ops.expand_dims(prefix, 0) if prefix.shape.ndims == 0 else prefix
    else:
        p_static = as_shape(prefix).as_list()
        p = None if None in p_static else p_static
    if isinstance(suffix, Tensor):
        raise TypeError("concat_shape: a state or output size must be an int or TensorShape, not a tensor.")
    s_static = as_shape(suffix).as_list()
    if static:
        return p_static + s_static
    if p is None or None in s_static:
        raise ValueError(f"Provided a prefix or suffix of None: {prefix} and {suffix}")
    if isinstance(p, list):
        return p + s_static
    return array_ops.concat([math_ops.cast(p, dtypes.int32), s_static], 0)


def zero_state_tensors(state_size, batch_size, dtype):
    """Zero tensors of shape ``[batch_size] + s`` for each size ``s`` of the nested ``state_size``."""
    def zeros(s):
        z = array_ops.zeros(concat_shape(batch_size, s), dtype=dtype)
        z.set_shape(concat_shape(batch_size, s, static=True))
        return z

    return nest.map_structure(zeros, state_size)


def _is_state_size_leaf(x):
    return isinstance(x, (int, TensorShape)) or x is None


class RNNCell(Layer):
    """The abstract recurrent cell: ``state_size``, ``output_size`` and ``call(inputs, state)``.

    Variables that ``call`` creates with ``tf.get_variable`` are tracked as the cell's weights.
    """

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._rnncell_scope = None

    def __call__(self, inputs, state, scope=None):
        if scope is not None:
            with vs.variable_scope(scope, custom_getter=self._rnn_get_variable) as captured:
                return super().__call__(inputs, state, scope=captured)
        if self._rnncell_scope is None:
            self._rnncell_scope = vs.get_variable_scope()
        with vs.variable_scope(self._rnncell_scope, custom_getter=self._rnn_get_variable,
                               auxiliary_name_scope=False):
            return super().__call__(inputs, state)

    def _rnn_get_variable(self, getter, *args, **kwargs):
        variable = getter(*args, **kwargs)
        trainable = any(variable is v for v in variables_mod.trainable_variables())
        weights = self._trainable_weights if trainable else self._non_trainable_weights
        if all(variable is not v for v in self._trainable_weights + self._non_trainable_weights):
            weights.append(variable)
        return variable

    def _call_in_scope(self, inputs, *args, **kwargs):
        # A cell's inputs may be nested; only a single tensor is converted and checked.
        if nest.is_sequence(inputs):
            return self._call_nested(inputs, *args, **kwargs)
        return super()._call_in_scope(inputs, *args, **kwargs)

    def _call_nested(self, inputs, *args, **kwargs):
        from sparseflow._src.framework.graph import get_default_graph

        with get_default_graph().name_scope(self._current_scope.original_name_scope):
            if not self.built:
                first = nest.flatten(inputs)[0]
                if self._dtype is None:
                    self._dtype = convert_to_tensor(first).dtype.base_dtype
                self.build(nest.map_structure(lambda x: convert_to_tensor(x).shape, inputs))
                self.built = True
            return self.call(inputs, *args, **kwargs)

    @property
    def state_size(self):
        """An int, a TensorShape, or a nested tuple of them: the size(s) of the state."""
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        """An int or TensorShape: the size of the output."""
        raise NotImplementedError("Abstract method")

    def build(self, _):
        pass

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """The zero state, for the batch of ``inputs`` or for ``batch_size`` rows of ``dtype``."""
        if inputs is not None:
            inputs = convert_to_tensor(inputs, name="inputs")
            if batch_size is None:
                static = inputs.shape.as_list()[0] if inputs.shape.ndims else None
                batch_size = static if static is not None else array_ops.shape(inputs)[0]
            dtype = inputs.dtype if dtype is None else dtype
        if batch_size is None or dtype is None:
            raise ValueError(f"batch_size and dtype cannot be None while constructing initial state: "
                             f"batch_size={batch_size}, dtype={dtype}")
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zero-filled state tensor(s) of shape ``[batch_size, s]`` for each ``s`` in ``state_size``."""
        with name_scope(type(self).__name__ + "ZeroState"):
            return zero_state_tensors(self.state_size, batch_size, dtypes.as_dtype(dtype))


class LayerRNNCell(RNNCell):
    """A cell whose variables live in its own layer scope (no re-entered caller scope)."""

    def __call__(self, inputs, state, scope=None, *args, **kwargs):
        return Layer.__call__(self, inputs, state, *args, scope=scope, **kwargs)


def _input_depth(cell, inputs_shape):
    depth = as_shape(inputs_shape)[-1] if as_shape(inputs_shape).ndims else None
    depth = getattr(depth, "value", depth)
    if depth is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {inputs_shape} (cell {cell.name}).")
    return int(depth)


def _activation(activation):
    if activation is None:
        return math_ops.tanh
    if isinstance(activation, str):
        from sparseflow._src.ops import nn_activation_ops

        fn = getattr(nn_activation_ops, activation, None) or getattr(math_ops, activation, None)
        if fn is None:
            raise ValueError(f"Unknown activation {activation!r}: pass a function or the name of a tf.nn activation.")
        return fn
    return activation


def _zeros_init(dtype):
    return init_ops.zeros_initializer(dtype=dtype) if dtype is not None else init_ops.zeros_initializer()


class BasicRNNCell(LayerRNNCell):
    """``h' = activation(W [x, h] + b)``; variables ``kernel`` [in+units, units] and ``bias``."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._activation = _activation(activation)

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(self, inputs_shape)
        self._kernel = self.add_weight(_WEIGHTS, shape=[depth + self._num_units, self._num_units])
        self._bias = self.add_weight(_BIAS, shape=[self._num_units], initializer=_zeros_init(self._dtype))
        self.built = True

    def call(self, inputs, state):
        gates = bias_add(math_ops.matmul(array_ops.concat([inputs, state], 1), self._kernel), self._bias)
        output = self._activation(gates)
        return output, output


class GRUCell(LayerRNNCell):
    """Gated recurrent unit: variables ``gates/kernel``, ``gates/bias`` (init 1.0),
    ``candidate/kernel``, ``candidate/bias`` (init 0)."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None, bias_initializer=None,
                 name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._activation = _activation(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(self, inputs_shape)
        n = self._num_units
        gate_bias_init = self._bias_initializer
        if gate_bias_init is None:
            gate_bias_init = init_ops.constant_initializer(1.0, dtype=self._dtype)
        self._gate_kernel = self.add_weight(f"gates/{_WEIGHTS}", shape=[depth + n, 2 * n],
                                            initializer=self._kernel_initializer)
        self._gate_bias = self.add_weight(f"gates/{_BIAS}", shape=[2 * n], initializer=gate_bias_init)
        self._candidate_kernel = self.add_weight(f"candidate/{_WEIGHTS}", shape=[depth + n, n],
                                                 initializer=self._kernel_initializer)
        self._candidate_bias = self.add_weight(
            f"candidate/{_BIAS}", shape=[n],
            initializer=self._bias_initializer if self._bias_initializer is not None else _zeros_init(self._dtype))
        self.built = True

    def call(self, inputs, state):
        gates = bias_add(math_ops.matmul(array_ops.concat([inputs, state], 1), self._gate_kernel), self._gate_bias)
        r, u = array_ops.split(value=math_ops.sigmoid(gates), num_or_size_splits=2, axis=1)
        candidate = math_ops.matmul(array_ops.concat([inputs, r * state], 1), self._candidate_kernel)
        c = self._activation(bias_add(candidate, self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class BasicLSTMCell(LayerRNNCell):
    """LSTM without peepholes or projection: gates ``i, j, f, o`` from one ``kernel`` [in+units, 4*units];
    ``forget_bias`` is added to ``f``. The state is ``LSTMStateTuple(c, h)`` (or ``[c, h]`` concatenated)."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(self, inputs_shape)
        n = self._num_units
        self._kernel = self.add_weight(_WEIGHTS, shape=[depth + n, 4 * n])
        self._bias = self.add_weight(_BIAS, shape=[4 * n], initializer=_zeros_init(self._dtype))
        self.built = True

    def call(self, inputs, state):
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(value=state, num_or_size_splits=2, axis=1)
        gates = bias_add(math_ops.matmul(array_ops.concat([inputs, h], 1), self._kernel), self._bias)
        i, j, f, o = array_ops.split(value=gates, num_or_size_splits=4, axis=1)
        forget_bias = convert_to_tensor(self._forget_bias, dtype=f.dtype)
        new_c = math_ops.add(math_ops.multiply(c, math_ops.sigmoid(math_ops.add(f, forget_bias))),
                             math_ops.multiply(math_ops.sigmoid(i), self._activation(j)))
        new_h = math_ops.multiply(self._activation(new_c), math_ops.sigmoid(o))
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else array_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(LayerRNNCell):
    """LSTM with optional peepholes (``w_f_diag``, ``w_i_diag``, ``w_o_diag``), cell clipping, and an
    output projection (``projection/kernel`` [units, num_proj], ``proj_clip``)."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None, num_proj=None,
                 proj_clip=None, num_unit_shards=None, num_proj_shards=None, forget_bias=1.0, state_is_tuple=True,
                 activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._num_unit_shards = num_unit_shards
        self._num_proj_shards = num_proj_shards
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        m = self._num_proj or self._num_units
        return LSTMStateTuple(self._num_units, m) if self._state_is_tuple else self._num_units + m

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(self, inputs_shape)
        n = self._num_units
        h_depth = self._num_proj or n
        shards = fixed_size_partitioner(self._num_unit_shards) if self._num_unit_shards is not None else None
        self._kernel = self.add_weight(_WEIGHTS, shape=[depth + h_depth, 4 * n], initializer=self._initializer,
                                       partitioner=shards)
        self._bias = self.add_weight(_BIAS, shape=[4 * n], initializer=_zeros_init(self._dtype))
        if self._use_peepholes:
            self._w_f_diag = self.add_weight("w_f_diag", shape=[n], initializer=self._initializer)
            self._w_i_diag = self.add_weight("w_i_diag", shape=[n], initializer=self._initializer)
            self._w_o_diag = self.add_weight("w_o_diag", shape=[n], initializer=self._initializer)
        if self._num_proj is not None:
            proj_shards = (fixed_size_partitioner(self._num_proj_shards) if self._num_proj_shards is not None
                           else None)
            self._proj_kernel = self.add_weight(f"projection/{_WEIGHTS}", shape=[n, self._num_proj],
                                                initializer=self._initializer, partitioner=proj_shards)
        self.built = True

    def call(self, inputs, state):
        n = self._num_units
        num_proj = self._num_proj or n
        sigmoid = math_ops.sigmoid
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = array_ops.slice(state, [0, 0], [-1, n])
            m_prev = array_ops.slice(state, [0, n], [-1, num_proj])
        if inputs.shape.with_rank(2).as_list()[1] is None:
            raise ValueError("Could not infer input size from inputs.get_shape()[-1]")
        lstm_matrix = bias_add(math_ops.matmul(array_ops.concat([inputs, m_prev], 1), self._kernel), self._bias)
        i, j, f, o = array_ops.split(value=lstm_matrix, num_or_size_splits=4, axis=1)
        if self._use_peepholes:
            c = (sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev
                 + sigmoid(i + self._w_i_diag * c_prev) * self._activation(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else array_ops.concat([c, m], 1)
        return m, new_state


class MultiRNNCell(RNNCell):
    """Stacks cells: each layer's output is the next one's input; cell ``i`` builds its variables
    under ``cell_i/``. The state is the tuple of the cells' states."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_sequence(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        if len({id(c) for c in cells}) < len(cells):
            from sparseflow._src.framework.tf_logging import warning

            warning("At least two cells provided to MultiRNNCell are the same object and will share weights.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_sequence(c.state_size) for c in self._cells):
            raise ValueError(f"Some cells return tuples of states, but the flag state_is_tuple is not set. "
                             f"State sizes are: {[c.state_size for c in self._cells]}")

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return super().zero_state(batch_size, dtype)

    @property
    def trainable_weights(self):
        return [w for c in self._cells for w in c.trainable_weights] if self.trainable else []

    @property
    def non_trainable_weights(self):
        weights = [w for c in self._cells for w in c.non_trainable_weights]
        if not self.trainable:
            weights = [w for c in self._cells for w in c.trainable_weights] + weights
        return weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    variables = weights

    def call(self, inputs, state):
        pos = 0
        cur = inputs
        new_states = []
        for i, cell in enumerate(self._cells):
            with vs.variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not nest.is_sequence(state):
                        raise ValueError(f"Expected state to be a tuple of length {len(self.state_size)}, but "
                                         f"received: {state}")
                    cur_state = state[i]
                else:
                    cur_state = array_ops.slice(state, [0, pos], [-1, cell.state_size])
                    pos += cell.state_size
                cur, new_state = cell(cur, cur_state)
                new_states.append(new_state)
        return cur, tuple(new_states) if self._state_is_tuple else array_ops.concat(new_states, 1)
