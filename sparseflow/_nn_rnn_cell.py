"""``tf.nn.rnn_cell``: TF1's recurrent cells and cell wrappers (re-exported)."""

# ruff: noqa: F401
from sparseflow._src.layers.rnn_cell_impl import (
    BasicLSTMCell,
    BasicRNNCell,
    GRUCell,
    LayerRNNCell,
    LSTMCell,
    LSTMStateTuple,
    MultiRNNCell,
    RNNCell,
)
from sparseflow._src.layers.rnn_cell_wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper
