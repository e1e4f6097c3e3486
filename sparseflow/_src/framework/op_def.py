"""Op definitions: inputs, outputs and attrs written as TensorFlow spec strings, plus a shape fn.

An op type is declared once::

    register_op("MatMul",
                inputs=["a: T", "b: T"], outputs=["product: T"],
                attrs=["transpose_a: bool = false", "transpose_b: bool = false",
                       "T: {bfloat16, half, float, double, int32, int64}"],
                shape_fn=_matmul_shape)

Argument specs: ``name: T`` (type from attr T), ``name: float`` (fixed type),
``name: N * T`` (N tensors of type T), ``name: Tlist`` (a ``list(type)`` attr) and
``name: Ref(T)`` (a reference input/output). Attr specs: ``name: kind [= default]`` where kind is
type, int, float, bool, string, shape, tensor, func, list(...), or a set of allowed values
``{float, double}`` / ``{'SAME', 'VALID'}``; ``int >= 1`` gives a minimum.

``coalescable=True`` lets the ``coalesce`` graph pass merge independent nodes of the op on one
device into one node (ops that send one request per run to other tasks); such an op has only list
arguments, and its attrs are list lengths, per-member lists, or shared settings (an int, bool,
float or string: nodes that differ in one are not merged); see passes/coalesce.py.

The shape fn receives the new Operation (inputs, attrs and ``op.inputs[i]`` static shapes are
available) and returns one TensorShape (or shape-like) per output; returning None means
"unknown" for every output.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.registry import Registry
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape

NO_DEFAULT = object()


@dataclasses.dataclass(frozen=True)
class ArgDef:
    name: str
    type: dtypes.DType | None = None  # fixed type
    type_attr: str = ""  # "T"
    number_attr: str = ""  # "N" for "N * T"
    type_list_attr: str = ""  # "Tlist" for heterogeneous lists
    is_ref: bool = False

    @property
    def is_list(self) -> bool:
        return bool(self.number_attr or self.type_list_attr)


@dataclasses.dataclass(frozen=True)
class AttrDef:
    name: str
    type: str  # "type", "int", "float", "bool", "string", "shape", "tensor", "func", "list(int)", ...
    default: object = NO_DEFAULT
    allowed_values: tuple | None = None
    minimum: int | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@dataclasses.dataclass
class OpDef:
    name: str
    input_args: list[ArgDef]
    output_args: list[ArgDef]
    attrs: dict[str, AttrDef]
    shape_fn: Callable | None
    is_stateful: bool = False
    allows_uninitialized_input: bool = False
    doc: str = ""
    site: str = ""
    coalescable: bool = False


_OPS = Registry("op definition")

_ARG_RE = re.compile(r"^\s*(\w+)\s*:\s*(.+?)\s*$")
_LIST_RE = re.compile(r"^(\w+)\s*\*\s*(\w+)$")
_REF_RE = re.compile(r"^Ref\((\w+|\w+\s*\*\s*\w+)\)$")  # Ref(T), or a list of refs Ref(N * T)


def _parse_type_name(s: str) -> dtypes.DType | None:
    s = s.strip()
    if s.startswith("DT_"):
        s = s[3:].lower()
    try:
        return dtypes.as_dtype(s)
    except TypeError:
        return None


def _parse_arg(spec: str, attrs: dict[str, AttrDef]) -> ArgDef:
    m = _ARG_RE.match(spec)
    if not m:
        raise ValueError(f"Bad argument spec {spec!r}; expected 'name: type'.")
    name, t = m.group(1), m.group(2)
    is_ref = False
    r = _REF_RE.match(t)
    if r:
        is_ref, t = True, r.group(1)
    lm = _LIST_RE.match(t)
    if lm:
        number_attr, elem = lm.group(1), lm.group(2)
        fixed = None if elem in attrs else _parse_type_name(elem)
        return ArgDef(name, type=fixed, type_attr="" if fixed else elem, number_attr=number_attr,
                      is_ref=is_ref)
    if t in attrs:
        kind = attrs[t].type
        if kind == "type":
            return ArgDef(name, type_attr=t, is_ref=is_ref)
        if kind == "list(type)":
            return ArgDef(name, type_list_attr=t, is_ref=is_ref)
        raise ValueError(f"Argument {name!r} names attr {t!r} of kind {kind}, not a type.")
    fixed = _parse_type_name(t)
    if fixed is None:
        raise ValueError(f"Argument {spec!r}: {t!r} is neither a dtype nor a declared type attr.")
    return ArgDef(name, type=fixed, is_ref=is_ref)


def _split_top(s: str, sep: str = ",") -> list[str]:
    out, depth, cur, quote = [], 0, [], None
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _parse_value(kind: str, text: str):
    text = text.strip()
    if kind.startswith("list("):
        inner = kind[5:-1]
        body = text.strip()
        if not (body.startswith("[") and body.endswith("]")):
            raise ValueError(f"List default must be [...], got {text!r}")
        return [_parse_value(inner, x) for x in _split_top(body[1:-1])]
    if kind == "type":
        d = _parse_type_name(text)
        if d is None:
            raise ValueError(f"Unknown type default {text!r}")
        return d
    if kind == "bool":
        return text.lower() == "true"
    if kind == "int":
        return int(text)
    if kind == "float":
        return float(text)
    if kind == "string":
        return text.strip("'\"")
    if kind == "shape":
        return unknown_shape() if text in ("<unknown>", "None") else TensorShape(eval_int_list(text))
    if kind == "tensor":  # "<dtype> [v, ...]", a read-only array (ImageSummary's bad_color)
        mt = re.match(r"^(\w+)\s*\[(.*)\]$", text)
        d = _parse_type_name(mt.group(1)) if mt else None
        if d is None:
            raise ValueError(f"Tensor default must be '<dtype> [values]', got {text!r}")
        arr = np.array([float(x) if d.is_floating else int(x) for x in _split_top(mt.group(2))],
                       dtype=d.as_numpy_dtype)
        arr.setflags(write=False)
        return arr
    raise ValueError(f"Attr kind {kind!r} takes no default ({text!r})")


def eval_int_list(text: str) -> list:
    body = text.strip().strip("[]()")
    return [None if x.strip() in ("?", "-1", "None") else int(x) for x in body.split(",") if x.strip()]


def _parse_attr(spec: str) -> AttrDef:
    name, _, rest = spec.partition(":")
    name = name.strip()
    default_text = None
    parts = _split_top(rest.replace(">=", "\x00"), "=")
    parts = [x.replace("\x00", ">=") for x in parts]
    if len(parts) == 2:
        rest, default_text = parts
    elif len(parts) > 2:
        raise ValueError(f"Bad attr spec {spec!r}")
    rest = rest.strip()
    allowed = None
    minimum = None
    mm = re.match(r"^(int|list\(.+\))\s*>=\s*(-?\d+)$", rest)
    if mm:
        rest, minimum = mm.group(1), int(mm.group(2))
    if rest.startswith("{"):
        values = _split_top(rest[1:-1])
        if values and values[0][:1] in "'\"":
            kind = "string"
            allowed = tuple(v.strip("'\"") for v in values)
        else:
            kind = "type"
            allowed = tuple(_parse_type_name(v) for v in values)
            if any(a is None for a in allowed):
                raise ValueError(f"Unknown type in {spec!r}")
    elif rest.startswith("list({"):
        kind = "list(type)"
        allowed = tuple(_parse_type_name(v) for v in _split_top(rest[6:-2]))
    else:
        kind = rest
    if kind not in ("type", "int", "float", "bool", "string", "shape", "tensor", "func") and not (
            kind.startswith("list(") and kind.endswith(")")):
        raise ValueError(f"Unknown attr kind {kind!r} in {spec!r}")
    default = NO_DEFAULT if default_text is None else _parse_value(kind, default_text)
    return AttrDef(name, kind, default, allowed, minimum)


def register_op(name: str, inputs=(), outputs=(), attrs=(), shape_fn=None, is_stateful=False,
                allows_uninitialized_input=False, doc: str = "", coalescable: bool = False) -> OpDef:
    """Declares op type ``name``. A second declaration of the same name is an error naming both."""
    attr_defs = {}
    for spec in attrs:
        a = _parse_attr(spec)
        attr_defs[a.name] = a
    import traceback

    frame = traceback.extract_stack(limit=2)[0]
    site = f"{frame.filename}:{frame.lineno}"
    op_def = OpDef(name, [_parse_arg(s, attr_defs) for s in inputs],
                   [_parse_arg(s, attr_defs) for s in outputs], attr_defs, shape_fn,
                   is_stateful, allows_uninitialized_input, doc, site, coalescable)
    if coalescable:
        _check_coalescable(op_def)
    _OPS.register(name, op_def, site)
    return op_def


def _check_coalescable(op_def: OpDef):
    counts = set()
    for arg in list(op_def.input_args) + list(op_def.output_args):
        if not arg.is_list:
            raise ValueError(f"{op_def.name} cannot be coalescable: its argument {arg.name!r} is not a list.")
        if arg.number_attr:
            counts.add(arg.number_attr)
    for name, a in op_def.attrs.items():
        if name not in counts and not a.type.startswith("list(") and a.type not in SHARED_ATTR_TYPES:
            raise ValueError(f"{op_def.name} cannot be coalescable: attr {name!r} ({a.type}) is neither a list length, "
                             f"a per-member list nor a shared setting ({', '.join(SHARED_ATTR_TYPES)}).")


#: attr types a coalescable op may have as a setting shared by the nodes it merges
SHARED_ATTR_TYPES = ("int", "bool", "float", "string")


def get_op_def(name: str) -> OpDef:
    """The OpDef of op type ``name``; a clear error naming unknown types."""
    op_def = _OPS.lookup(name, None)
    if op_def is None:
        raise KeyError(f"Op type {name!r} is not registered in sparseflow. If it is a TensorFlow op, "
                       f"it is not implemented yet.")
    return op_def


def is_registered(name: str) -> bool:
    return name in _OPS


def registered_ops() -> list[str]:
    return sorted(_OPS.keys())


def op_registry() -> Registry:
    return _OPS


def input_arg_flags(op_def: OpDef, attrs: dict) -> list[bool]:
    """One ``is_ref`` flag per flattened input of a node with ``attrs``."""
    flags = []
    for arg in op_def.input_args:
        if arg.number_attr:
            n = attrs.get(arg.number_attr, 0)
        elif arg.type_list_attr:
            n = len(attrs.get(arg.type_list_attr, ()))
        else:
            n = 1
        flags.extend([arg.is_ref] * n)
    return flags
