"""``tf.app.flags`` / ``tf.flags`` and ``tf.app.run``: absl's flags, as TensorFlow 1.x exposes them.

TensorFlow's own ``tf.flags`` is absl.flags (absl-py) with two TF1 conveniences, kept here:
``FLAGS`` parses ``sys.argv`` on the first read of a flag when nobody parsed it yet, and the
``DEFINE_*`` functions also take TF1's keyword names (``flag_name``, ``default_value``,
``docstring``). ``tf.app.run(main)`` is ``absl.app.run`` tolerating flags no module defined.

Example:
    >>> import sparseflow as tf
    >>> _ = tf.app.flags.DEFINE_integer("doc_batch_size", 32, "Examples per step.")
    >>> tf.flags.FLAGS(["prog", "--doc_batch_size=64"])
    ['prog']
    >>> tf.flags.FLAGS.doc_batch_size
    64
"""

from __future__ import annotations

import functools
import sys

from absl import app as absl_app
from absl import flags as absl_flags

__all__ = ["FLAGS", "run"] + [name for name in dir(absl_flags) if name.startswith(("DEFINE", "declare_key_flag",
                                                                                    "mark_flag", "register_"))]

_RENAMED = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _tf1_keywords(define):
    """``define`` accepting TF1's keyword names as well as absl's."""

    @functools.wraps(define)
    def wrapper(*args, **kwargs):
        for old, new in _RENAMED.items():
            if old in kwargs:
                if new in kwargs:
                    raise TypeError(f"{define.__name__}() got both {old!r} and {new!r}")
                kwargs[new] = kwargs.pop(old)
        return define(*args, **kwargs)

    return wrapper


class _FlagValuesWrapper:
    """absl's FlagValues that parses ``sys.argv`` when a flag is first read before any parse."""

    def __init__(self, flag_values):
        self.__dict__["__wrapped"] = flag_values

    def _parsed_values(self):
        wrapped = self.__dict__["__wrapped"]
        if not wrapped.is_parsed():  # like TensorFlow: an unknown flag in sys.argv raises here
            wrapped(sys.argv)
        return wrapped

    def __getattr__(self, name):
        wrapped = self.__dict__["__wrapped"]
        if name.startswith("_") or name in {"is_parsed", "mark_as_parsed", "unparse_flags", "find_module_defining_flag",
                                            "get_key_flags_for_module", "register_flag_by_module", "append_flag_values",
                                            "main_module_help", "module_help", "get_help", "flag_values_dict",
                                            "read_flags_from_files", "set_default", "__call__"}:
            return getattr(wrapped, name)
        return getattr(self._parsed_values(), name)

    def __setattr__(self, name, value):
        setattr(self._parsed_values(), name, value)

    def __delattr__(self, name):
        delattr(self.__dict__["__wrapped"], name)

    def __dir__(self):
        return dir(self.__dict__["__wrapped"])

    def __getitem__(self, name):
        return self.__dict__["__wrapped"][name]

    def __setitem__(self, name, flag):
        self.__dict__["__wrapped"][name] = flag

    def __len__(self):
        return len(self.__dict__["__wrapped"])

    def __iter__(self):
        return iter(self.__dict__["__wrapped"])

    def __contains__(self, name):
        return name in self.__dict__["__wrapped"]

    def __str__(self):
        return str(self.__dict__["__wrapped"])

    def __call__(self, *args, **kwargs):
        return self.__dict__["__wrapped"](*args, **kwargs)


FLAGS = _FlagValuesWrapper(absl_flags.FLAGS)

for _name in dir(absl_flags):
    if _name.startswith("DEFINE"):
        globals()[_name] = _tf1_keywords(getattr(absl_flags, _name))
    elif _name.startswith(("declare_key_flag", "mark_flag", "register_")):
        globals()[_name] = getattr(absl_flags, _name)

Flag = absl_flags.Flag
FlagValues = absl_flags.FlagValues
Error = absl_flags.Error
IllegalFlagValueError = absl_flags.IllegalFlagValueError
UnrecognizedFlagError = absl_flags.UnrecognizedFlagError
__all__ += ["Flag", "FlagValues", "Error", "IllegalFlagValueError", "UnrecognizedFlagError"]


def _parse_flags_tolerate_undef(argv):
    """Parses the flags defined so far; leaves the rest of ``argv`` to the program."""
    return absl_flags.FLAGS(sys.argv if argv is None else argv, known_only=True)


def run(main=None, argv=None):
    """Parses flags, then exits with ``main(argv)`` (``__main__.main`` when None)."""
    main = main or sys.modules["__main__"].main
    absl_app.run(main=main, argv=argv, flags_parser=_parse_flags_tolerate_undef)


# The rest of absl.flags' public names TensorFlow's tf.flags carries (parsers, serializers, flag
# classes, validators, help helpers): absl's own objects, so they work with the flags defined above.
_ABSL_NAMES = [
    "ArgumentParser", "ArgumentSerializer", "BaseListParser", "BooleanFlag", "BooleanParser", "CantOpenFlagFileError",
    "CsvListSerializer", "DuplicateFlagError", "EnumClassFlag", "EnumClassListSerializer", "EnumClassParser",
    "EnumClassSerializer", "EnumFlag", "EnumParser", "FlagHolder", "FlagNameConflictsWithMethodError", "FloatParser",
    "IntegerParser", "ListParser", "ListSerializer", "MultiEnumClassFlag", "MultiFlag", "UnparsedFlagAccessError",
    "ValidationError", "WhitespaceSeparatedListParser", "adopt_module_key_flags", "disclaim_key_flags", "doc_to_help",
    "flag_dict_to_args", "get_help_width", "mark_bool_flags_as_mutual_exclusive", "multi_flags_validator",
    "override_value", "set_default", "text_wrap", "validator",
]
for _name in _ABSL_NAMES:
    if hasattr(absl_flags, _name):
        globals()[_name] = getattr(absl_flags, _name)
        __all__.append(_name)
del _name
