"""Operator schemas: ``"foo.overload(Tensor(a!) x, int n=2, *, float s=1.) -> Tensor"``.

A small reading of ATen's schema grammar (``function_schema_parser.cpp``) with its error
messages, the schema's printed form (``str(schema)`` as torch prints it), and the binding of a
call's arguments to a schema the way torch's boxed calling convention does it: every value
checked and converted to its declared type, positional arguments equal to their default dropped
from the end, keyword-only ones passed by keyword only when they differ from their default.
"""
from __future__ import annotations

import re

__all__ = ["FunctionSchema", "Argument", "AliasInfo", "parse_schema", "SchemaError"]

# the base types a schema may name (torch's schema_type_parser); others are "unknown type"
_BASE_TYPES = frozenset({
    "Tensor", "int", "float", "bool", "str", "Scalar", "SymInt", "SymFloat", "SymBool",
    "ScalarType", "Device", "Layout", "MemoryFormat", "Generator", "Storage", "Dimname",
    "Any", "t", "complex", "number", "Stream", "QScheme", "ConstQuantizerPtr", "DeviceIndex",
    "AnyEnumType", "GenericList", "Capsule"})

_UNKNOWN_TYPE = ("\nunknown type specifier. Common valid schema types include Tensor, SymInt, "
                 "int, float, bool, Scalar; for a full list, please see "
                 "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md"
                 "#func :\n")


SchemaError = RuntimeError     # torch's parser raises RuntimeError


# ------------------------------------------------------------------ tokens

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<arrow>->)
  | (?P<punct2>::)
  | (?P<number>-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<punct>.)
""", re.X | re.S)


class _Tok:
    __slots__ = ("kind", "text", "pos")

    def __init__(self, kind, text, pos):
        self.kind, self.text, self.pos = kind, text, pos

    def name(self):
        """The token's name in torch's messages: ``'ident'``, ``'arrow'``, ``')'``..."""
        return self.text if self.kind in ("punct", "punct2") else self.kind


def _tokens(src):
    out = []
    for m in _TOKEN.finditer(src):
        kind = m.lastgroup
        if kind == "ws":
            continue
        out.append(_Tok(kind, m.group(), m.start()))
    out.append(_Tok("eof", "", len(src)))
    return out


# ------------------------------------------------------------------ the schema objects

class AliasInfo:
    """An alias annotation: ``Tensor(a)`` (a view), ``Tensor(a!)`` (written in place)."""

    def __init__(self, sets, is_write, after=None):
        self.before_set = set(sets)
        self.after_set = set(after if after is not None else sets)
        self.is_write = is_write
        self._text = None

    def __str__(self):
        if self._text is not None:
            return self._text
        return "|".join(sorted(self.before_set)) + ("!" if self.is_write else "")


class Argument:
    """One argument (or return) of a schema: its type text, name, default and alias."""

    def __init__(self, name, base, suffix, alias_info, default, has_default, kwarg_only,
                 default_text=None):
        self.name = name
        self.base = base                    # "Tensor", "int", ...
        self.suffix = suffix                # "", "?", "[]", "[2]", "?[]", "[]?"
        self.alias_info = alias_info
        self.default_value = default
        self.has_default_value = has_default
        self.kwarg_only = kwarg_only
        self._default_text = default_text

    # -- the type
    @property
    def type_str(self):
        alias = f"({self.alias_info})" if self.alias_info is not None else ""
        return self.base + alias + self.suffix

    @property
    def is_optional(self):
        return self.suffix.endswith("?")

    @property
    def list_size(self):
        m = re.search(r"\[(\d+)\]", self.suffix)
        return int(m.group(1)) if m else None

    def py_type_name(self):
        """The type as torch's call errors name it: ``'List[int]'``, ``'Optional[Tensor]'``."""
        return _py_type(self.base, self.suffix)

    def is_tensor_like(self):
        return self.base == "Tensor"

    def __str__(self):
        s = self.type_str
        if self.name:
            s += " " + self.name
        if self.has_default_value:
            s += "=" + _default_repr(self)
        return s

    def __repr__(self):
        return str(self)


def _py_type(base, suffix):
    names = {"Scalar": "number", "SymInt": "int", "SymFloat": "float", "SymBool": "bool"}
    t = names.get(base, base)
    # suffixes read left to right: int?[] is List[Optional[int]]
    for part in re.findall(r"\[\d*\]|\?", suffix):
        t = f"Optional[{t}]" if part == "?" else f"List[{t}]"
    return t


def _float_repr(v):
    if v != v or v in (float("inf"), float("-inf")):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}[repr(v)]
    s = "%.17g" % v
    if "." not in s and "e" not in s and "n" not in s:
        s += "."
    return s


def _value_repr(base, v):
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, list):
        return "[" + ", ".join(_value_repr(base, x) for x in v) + "]"
    if isinstance(v, float):
        return _float_repr(v)
    if isinstance(v, str):
        if base == "str":
            return '"' + v + '"'
        return v                        # an enum-like default: contiguous_format, long, Mean
    return str(v)


def _default_repr(arg):
    return _value_repr(arg.base, arg.default_value)


class FunctionSchema:
    """A parsed operator schema; ``str()`` prints it as torch does."""

    def __init__(self, name, overload_name, arguments, returns, returns_parenthesized):
        self.name = name                    # "ns::op" (or "op" before a namespace is given)
        self.overload_name = overload_name
        self.arguments = arguments
        self.returns = returns
        self._returns_parenthesized = returns_parenthesized

    @property
    def is_mutable(self):
        return any(a.alias_info is not None and a.alias_info.is_write for a in self.arguments)

    def _is_view_op(self):
        return any(a.alias_info is not None and not a.alias_info.is_write
                   for a in self.arguments)

    def with_namespace(self, ns):
        return FunctionSchema(f"{ns}::{self.name}", self.overload_name, self.arguments,
                              self.returns, self._returns_parenthesized)

    def __str__(self):
        args = []
        seen_kw = False
        for a in self.arguments:
            if a.kwarg_only and not seen_kw:
                args.append("*")
                seen_kw = True
            args.append(str(a))
        name = self.name + ("." + self.overload_name if self.overload_name else "")
        if len(self.returns) == 1 and not self.returns[0].name:
            rets = str(self.returns[0])
        else:
            rets = "(" + ", ".join(str(r) for r in self.returns) + ")"
        return f"{name}({', '.join(args)}) -> {rets}"

    def __repr__(self):
        return str(self)


# ------------------------------------------------------------------ the parser

class _Parser:
    def __init__(self, src):
        self.src = src
        self.toks = _tokens(src)
        self.i = 0

    @property
    def cur(self):
        return self.toks[self.i]

    def next(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def error_at(self, tok, head):
        if tok.kind == "eof":
            return SchemaError(f"{head}here:\n{self.src}")
        width = max(len(tok.text), 1)
        return SchemaError(f"{head}here:\n{self.src}\n{' ' * tok.pos}{'~' * width} <--- HERE\n")

    def expect(self, kind):
        t = self.cur
        if t.name() != kind:
            raise self.error_at(t, f"expected {kind} but found '{t.name()}' ")
        return self.next()

    def accept(self, kind):
        if self.cur.name() == kind:
            return self.next()
        return None

    # decl := name ['.' overload] '(' args ')' '->' returns
    def declaration(self, require_name=True):
        name = ""
        overload = ""
        if require_name:
            name = self.expect("ident").text
            if self.accept("::"):
                name += "::" + self.expect("ident").text
            if self.accept("."):
                overload = self.expect("ident").text
        self.expect("(")
        args = []
        kwarg_only = False
        seen_default = False
        if not self.accept(")"):
            while True:
                if self.accept("*"):
                    kwarg_only = True
                else:
                    a = self.argument(kwarg_only, is_return=False)
                    if a.has_default_value:
                        seen_default = True
                    elif seen_default and not kwarg_only:
                        raise SchemaError(
                            "!seen_default_arg || arg.kwarg_only() INTERNAL ASSERT FAILED at "
                            "\"/__w/pytorch/pytorch/aten/src/ATen/core/function_schema.h\":342, "
                            "please report a bug to PyTorch. Non-default positional argument "
                            f"follows default argument. Parameter {a.name} in {self.src}")
                    args.append(a)
                if not self.accept(","):
                    self.expect(")")
                    break
        self.expect("arrow")
        returns = []
        paren = False
        if self.cur.name() == "(":
            paren = True
            self.next()
            if not self.accept(")"):
                while True:
                    returns.append(self.argument(False, is_return=True))
                    if not self.accept(","):
                        self.expect(")")
                        break
        else:
            returns.append(self.argument(False, is_return=True))
        return FunctionSchema(name, overload, args, returns, paren)

    def argument(self, kwarg_only, is_return):
        base_tok = self.expect("ident")
        base = base_tok.text
        if base not in _BASE_TYPES:
            width = len(base_tok.text)
            raise SchemaError(f"{_UNKNOWN_TYPE}{self.src}\n{' ' * base_tok.pos}{'~' * width}"
                              " <--- HERE\n")
        alias = None
        if self.cur.name() == "(" and base == "Tensor":
            alias = self.alias()
        suffix = ""
        while True:
            if self.accept("?"):
                suffix += "?"
            elif self.cur.name() == "[":
                self.next()
                n = self.accept("number")
                self.expect("]")
                suffix += f"[{n.text}]" if n is not None else "[]"
            else:
                break
        name = ""
        if is_return:
            t = self.accept("ident")
            name = t.text if t is not None else ""
        else:
            name = self.expect("ident").text
        default, has_default, text = None, False, None
        if not is_return and self.accept("="):
            start = self.cur.pos
            default = self.default_value(base, suffix)
            text = self.src[start:self.cur.pos].strip()
            has_default = True
        return Argument(name, base, suffix, alias, default, has_default, kwarg_only, text)

    def alias(self):
        self.expect("(")
        sets = [self.alias_set()]
        while self.accept("|"):
            sets.append(self.alias_set())
        is_write = bool(self.accept("!"))
        after = None
        if self.accept("arrow"):
            after = []
            if self.accept("*"):
                after.append("*")
            else:
                after.append(self.alias_set())
        self.expect(")")
        return AliasInfo(sets, is_write, after)

    def alias_set(self):
        if self.accept("*"):
            return "*"
        return self.expect("ident").text

    def default_value(self, base, suffix):
        is_list = "[" in suffix
        if is_list and self.cur.name() == "[":
            self.next()
            items = []
            if not self.accept("]"):
                while True:
                    items.append(self.scalar_value(base))
                    if not self.accept(","):
                        self.expect("]")
                        break
            return items
        v = self.scalar_value(base)
        return v

    def scalar_value(self, base):
        t = self.cur
        if t.kind == "number":
            self.next()
            v = float(t.text) if re.search(r"[.eE]", t.text) else int(t.text)
            if base in ("float", "SymFloat") and isinstance(v, int):
                v = float(v)
            return v
        if t.kind == "string":
            self.next()
            return t.text[1:-1]
        if t.kind == "ident":
            self.next()
            return {"True": True, "False": False, "None": None}.get(t.text, t.text)
        if t.name() == "-":                 # -inf
            self.next()
            w = self.expect("ident").text
            return -float(w) if w in ("inf",) else "-" + w
        raise self.error_at(t, f"expected number but found '{t.name()}' ")


def parse_schema(src, *, require_name=True):
    """Parse ``src`` (``"name.overload(args) -> returns"``) into a ``FunctionSchema``."""
    return _Parser(src).declaration(require_name)


# ------------------------------------------------------------------ binding a call

CallError = RuntimeError       # a call that does not fit its schema: torch's RuntimeError


def _tensor_class():
    from .._tensor import Tensor
    return Tensor


def _convert(arg, value, T):
    """``value`` as ``arg``'s type, or raise ``ValueError`` with the cast error's details."""
    return _convert_type(arg.base, arg.suffix, value, T)


_CAST = ("Unable to cast Python instance of type {} to C++ type '?' (#define "
         "PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)")


class _Cast(str):
    def format(self, t):
        return str.format(self, str(t).replace("torchlike.", "torch."))


_CAST = _Cast(_CAST)


def _convert_type(base, suffix, value, T):
    if suffix.endswith("?"):
        if value is None:
            return None
        return _convert_type(base, suffix[:-1], value, T)
    if suffix.endswith("]"):
        inner = suffix[:suffix.rfind("[")]
        size = re.search(r"\[(\d*)\]$", suffix).group(1)
        if isinstance(value, (list, tuple)):
            try:
                return [_convert_type(base, inner, v, T) for v in value]
            except ValueError:
                if base == "SymInt":        # torch names the element's type for SymInt[]
                    raise
                raise ValueError(_CAST.format(type(value))) from None
        if size and base in ("int", "SymInt", "bool", "float") and not isinstance(value, T):
            # int[2] stride=1: a single value stands for the whole list
            return [_convert_type(base, inner, value, T)] * int(size)
        raise ValueError(_CAST.format(type(value)))
    if base == "Tensor":
        if isinstance(value, T):
            return value
        raise ValueError(f"Unable to cast {value!r} to Tensor")
    if base in ("int", "SymInt"):
        if isinstance(value, T) and value.numel() == 1:
            return int(value.item())
        if isinstance(value, int) or _is_np_int(value):
            return int(value)
        raise ValueError(_CAST.format(type(value)))
    if base in ("float", "SymFloat"):
        if isinstance(value, T) and value.numel() == 1:
            return float(value.item())
        if isinstance(value, (int, float)) or _is_np_number(value):
            return float(value)
        raise ValueError(_CAST.format(type(value)))
    if base in ("bool", "SymBool"):
        if isinstance(value, T) and value.numel() == 1:
            return bool(value.item())
        if isinstance(value, (bool, int, float)) or _is_np_number(value):
            return bool(value)
        raise ValueError(_CAST.format(type(value)))
    if base == "str":
        if isinstance(value, str):
            return value
        raise ValueError(_CAST.format(type(value)))
    if base in ("Scalar", "number"):
        if isinstance(value, (bool, int, float, complex)):
            return value
        if _is_np_number(value):
            return value.item()
        raise ValueError(f"Cannot cast {value!r} to number")
    return value                            # dtypes, devices, generators, Any: as given


def _is_np_int(v):
    return type(v).__module__ == "numpy" and hasattr(v, "dtype") and v.dtype.kind in "iu"


def _is_np_number(v):
    return type(v).__module__ == "numpy" and hasattr(v, "dtype") and v.dtype.kind in "biufc"


def _found_type(value, T):
    if isinstance(value, T):
        return "Tensor"
    return type(value).__name__


def _equal_default(a, v):
    d = a.default_value
    if "[" in a.suffix and a.list_size and d is not None and not isinstance(d, list):
        d = [d] * a.list_size
    return _same_value(v, d)


def _same_value(v, d):
    if isinstance(v, list) and isinstance(d, list):
        return len(v) == len(d) and all(_same_value(x, y) for x, y in zip(v, d))
    return type(v) is type(d) and type(v) in (int, float, bool, str, complex, type(None)) \
        and v == d


def bind(schema, args, kwargs, *, several=False):
    """Check and convert a call's ``args``/``kwargs`` against ``schema``.

    Returns ``(positional, keyword)`` as torch's boxed convention hands them to a Python
    kernel (converted values, defaults dropped), and the full ``(all_args, all_kwargs)`` with
    every default filled in (what ``setup_context`` and the fake impl see)."""
    T = _tensor_class()
    op = schema.name
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(positional):
        if several:
            raise CallError(f"{op}() expected at most {len(schema.arguments)} argument(s) but "
                            f"received {len(args) + len(kwargs)} argument(s). "
                            f"Declaration: {schema}")
        raise CallError(f"{op}() takes {len(positional)} positional argument(s) but "
                        f"{len(args)} was/were given.  Declaration: {schema}")
    names = {a.name for a in schema.arguments}
    for k in kwargs:
        if k not in names:
            raise CallError(f"Unknown keyword argument '{k}' for operator '{op}'. "
                            f"Schema: {schema}")
    values = []
    for i, a in enumerate(schema.arguments):
        if i < len(args) and not a.kwarg_only:
            if a.name in kwargs:
                raise CallError(f"Argument '{a.name}' specified both as positional and "
                                f"keyword argument. Schema: {schema}")
            v = args[i]
        elif a.name in kwargs:
            v = kwargs[a.name]
        elif a.has_default_value:
            values.append((a, a.default_value, True))
            continue
        else:
            raise CallError(f"{op}() is missing value for argument '{a.name}'. "
                            f"Declaration: {schema}")
        try:
            cv = _convert(a, v, T)
        except ValueError as e:
            raise CallError(
                f"{op}() Expected a value of type '{a.py_type_name()}' for argument "
                f"'{a.name}' but instead found type '{_found_type(v, T)}'.\nPosition: {i}\n"
                f"Value: {v!r}\nDeclaration: {schema}\nCast error details: {e}") from None
        values.append((a, cv, False))
    # what the kernel receives: trailing positional defaults and default keywords dropped
    pos = [(a, v, d) for a, v, d in values if not a.kwarg_only]
    while pos and pos[-1][0].has_default_value and (pos[-1][2] or _equal_default(pos[-1][0],
                                                                                   pos[-1][1])):
        pos.pop()
    kw = {a.name: v for a, v, d in values
          if a.kwarg_only and not (d or (a.has_default_value and _equal_default(a, v)))}
    full_args = tuple(v for a, v, _ in values if not a.kwarg_only)
    full_kwargs = {a.name: v for a, v, _ in values if a.kwarg_only}
    return tuple(v for _, v, _ in pos), kw, full_args, full_kwargs
