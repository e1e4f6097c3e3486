"""``tf.data.Iterator`` (TF1): one-shot, initializable, reinitializable and feedable iterators, and
Python iteration of a dataset without a Session.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None])
    ...     it = tf.data.make_initializable_iterator(tf.data.Dataset.from_tensor_slices(x).batch(2))
    ...     nxt = it.get_next()
    ...     with tf.Session() as sess:
    ...         sess.run(it.initializer, {x: [1.0, 2.0, 3.0]})
    ...         print(sess.run(nxt), sess.run(nxt))
    ...         try:
    ...             sess.run(nxt)
    ...         except tf.errors.OutOfRangeError:
    ...             print("end")
    [1. 2.] [3.]
    end
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.data import data_ops  # noqa: F401 - registers the iterator ops and kernels
from sparseflow._src.data import dataset_structure as st
from sparseflow._src.data.dataset import Dataset, IterContext, all_captures
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph, name_scope
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.sparse_tensor import SparseTensorValue
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_util import constant_value


class Iterator:
    """An iterator resource in the graph: ``get_next()`` gives the next element as tensors."""

    def __init__(self, iterator_resource, initializer, element_spec):
        self._resource = iterator_resource
        self._initializer = initializer
        self._element_spec = element_spec
        self._types = [c[0] for c in st.component_specs(element_spec)]
        self._shapes = [c[1] for c in st.component_specs(element_spec)]

    # ------------------------------------------------------------------ constructors
    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """A reinitializable iterator for datasets of this structure (see ``make_initializer``)."""
        spec = st.spec_from_legacy(st.map_structure(dtypes.as_dtype, output_types), output_shapes, output_classes)
        types, shapes = _flat_attrs(spec)
        op = apply_op("IteratorV2", [], {"output_types": types, "output_shapes": shapes,
                                         "shared_name": shared_name or ""}, name="Iterator")
        return Iterator(op.outputs[0], None, spec)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None, output_classes=None):
        """A feedable iterator: runs whichever iterator ``string_handle`` (a fed string) names."""
        spec = st.spec_from_legacy(st.map_structure(dtypes.as_dtype, output_types), output_shapes, output_classes)
        types, shapes = _flat_attrs(spec)
        handle = convert_to_tensor(string_handle, dtype=dtypes.string)
        op = apply_op("IteratorFromStringHandleV2", [handle], {"output_types": types, "output_shapes": shapes},
                      name="IteratorFromStringHandle")
        return Iterator(op.outputs[0], None, spec)

    # ------------------------------------------------------------------ structure
    @property
    def element_spec(self):
        return self._element_spec

    @property
    def output_types(self):
        return st.types_of(self._element_spec)

    @property
    def output_shapes(self):
        return st.shapes_of(self._element_spec)

    @property
    def output_classes(self):
        return st.classes_of(self._element_spec)

    # ------------------------------------------------------------------ ops
    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        """An op that (re)starts this iterator on ``dataset`` (same structure and types)."""
        spec = dataset.element_spec
        try:
            st.assert_same_structure(self._element_spec, spec)
        except TypeError:
            raise TypeError(f"Expected output structure {self._element_spec!r}, got {spec!r}.") from None
        for mine, theirs in zip(st.flatten(self._element_spec), st.flatten(spec)):
            if mine.dtype != theirs.dtype or type(mine) is not type(theirs):
                raise TypeError(f"Expected output types {self.output_types!r} but got dataset with output types "
                                f"{dataset.output_types!r}.")
            if not mine.shape.is_compatible_with(theirs.shape):
                raise TypeError(f"Expected output shapes compatible with {self.output_shapes!r} but got dataset "
                                f"with output shapes {dataset.output_shapes!r}.")
        with name_scope(name, "make_initializer"):
            variant = _host_dataset(dataset)
            return apply_op("MakeIterator", [variant, self._resource], name="MakeIterator")

    def get_next(self, name=None):
        """The next element as tensors (SparseTensors for sparse parts); OutOfRangeError at the end."""
        op = apply_op("IteratorGetNext", [self._resource],
                      {"output_types": self._types, "output_shapes": self._shapes}, name=name or "IteratorGetNext")
        return st.from_tensors(self._element_spec, op.outputs)

    def string_handle(self, name=None):
        """A string tensor naming this iterator, to feed a ``from_string_handle`` iterator."""
        return apply_op("IteratorToStringHandle", [self._resource], name=name or "IteratorToStringHandle").outputs[0]


def _flat_attrs(spec):
    comps = st.component_specs(spec)
    return [c[0] for c in comps], [c[1] for c in comps]


def _register(dataset) -> int:
    graph = get_default_graph()
    while getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    table = graph._extra_state.setdefault("datasets", {})
    for k, v in table.items():
        if v is dataset:
            return k
    key = len(table) + 1
    table[key] = dataset
    return key


def _host_dataset(dataset) -> Tensor:
    if not isinstance(dataset, Dataset):
        raise TypeError(f"Expected a Dataset, got {type(dataset).__name__}.")
    caps = all_captures(dataset)
    return apply_op("HostDataset", [caps], {"dataset_id": _register(dataset)},
                    name=type(dataset).__name__).outputs[0]


def make_initializable_iterator(dataset, shared_name=None):
    """``tf.compat.v1.data.make_initializable_iterator``: run ``iterator.initializer`` (feeding any
    placeholders the dataset uses) before ``get_next``; run it again to start over."""
    spec = dataset.element_spec
    types, shapes = _flat_attrs(spec)
    op = apply_op("IteratorV2", [], {"output_types": types, "output_shapes": shapes,
                                     "shared_name": shared_name or ""}, name="Iterator")
    it = Iterator(op.outputs[0], None, spec)
    it._initializer = it.make_initializer(dataset)
    return it


def make_one_shot_iterator(dataset):
    """``tf.compat.v1.data.make_one_shot_iterator``: starts on first use; its dataset may not read
    placeholders (use an initializable iterator for that)."""
    caps = all_captures(dataset)
    for t in caps:
        bad = _placeholder_source(t)
        if bad is not None:
            raise ValueError(f"Failed to create a one-shot iterator for a dataset: it captures the placeholder "
                             f"{bad.name!r}, which has no value when the iterator starts. Use "
                             f"`make_initializable_iterator()` and feed the placeholder when running its "
                             f"initializer.")
    spec = dataset.element_spec
    types, shapes = _flat_attrs(spec)
    op = apply_op("OneShotIterator", [caps], {"dataset_id": _register(dataset), "output_types": types,
                                              "output_shapes": shapes}, name="OneShotIterator")
    return Iterator(op.outputs[0], None, spec)


def _placeholder_source(t):
    seen, stack = set(), [t.op]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type in ("Placeholder", "PlaceholderV2"):
            return op
        stack.extend(i.op for i in op.inputs)
    return None


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    return dataset_or_iterator.output_classes


# ---------------------------------------------------------------------- Python iteration
def python_iterator(dataset):
    """Iterates ``dataset`` on the host: nested NumPy values; threads stop when the loop ends."""
    caps = all_captures(dataset)
    values = _evaluate(caps)
    state = dataset.__dict__.setdefault("_eager_state", {})
    runner = state.get("runner")
    if runner is None:
        runner = state["runner"] = host_function_runner()  # functions compile once per dataset
    ctx = IterContext(values, runner, persistent=state)
    ctx.state = state  # an in-memory cache is reused by later loops, as in TensorFlow 2
    ctx.seed_generators = state.setdefault("seed_generators", {})  # later loops reshuffle, as in TensorFlow 2
    return _python_loop(ctx, dataset)


def _python_loop(ctx, dataset):
    s = st.structure(dataset.element_spec)
    gen = ctx.iterate(dataset)
    try:
        for el in gen:
            yield s.pack([_output(v) for v in s.flatten(el)])
    finally:
        ctx.cancelled.set()
        gen.close()


def _output(v):
    if isinstance(v, SparseTensorValue):
        return SparseTensorValue(_output_array(v.indices), _output_array(v.values), _output_array(v.dense_shape))
    return _output_value(v)


def _output_array(v):
    v = np.asarray(v)
    return v if v.flags.writeable else v.copy()


def _output_value(v):
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return v[()]
        return v if v.flags.writeable else v.copy()
    return v


def host_function_runner():
    """Compiles dataset functions outside any session, on a private CPU device."""
    from sparseflow._src.runtime.devices import DeviceMgr
    from sparseflow._src.runtime.functions import FunctionRunner

    devices = DeviceMgr.local(1)
    return FunctionRunner({}, None, devices, devices.names[0])


def _evaluate(tensors) -> dict:
    """Values of captured graph tensors: constants directly, anything else through a Session."""
    values, rest = {}, []
    for t in tensors:
        v = constant_value(t)
        if v is None:
            rest.append(t)
        else:
            values[t] = v
    if rest:
        from sparseflow._src.runtime.session import Session

        with Session(graph=rest[0].graph) as sess:
            for t, v in zip(rest, sess.run(rest)):
                values[t] = np.asarray(v) if not isinstance(v, np.ndarray) else v
    return values

