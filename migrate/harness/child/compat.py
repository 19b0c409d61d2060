"""Make old scripts run here, inside the child interpreter (stdlib + torch, Python 3.5 syntax).

Two layers, applied before the script starts:

``map_cuda_to_cpu`` (always, for CPU runs): legacy scripts hard-code
``.cuda()``; the harness hides CUDA (``CUDA_VISIBLE_DEVICES=""``) and turns the
0.3-era CUDA placement idioms into no-ops: ``Tensor.cuda``, ``Module.cuda``,
``Tensor.pin_memory``, ``torch.cuda.FloatTensor`` & co. (the CPU types),
``.type("torch.cuda.X")``, ``torch.cuda.synchronize``/``set_device``. Modern
spellings (``.to("cuda")``, ``device="cuda"``) are left alone: a script that
names CUDA that way asks for a GPU and fails plainly without one.

``install_legacy`` (``--compat``, OLD only: NEW must run on current PyTorch as it
is): restores 0.3/0.4 behaviour that now raises or silently changed:
- ``x.data[0]`` / ``x[0]`` on a 0-dim tensor gives the Python number (0.3 losses
  were 1-element vectors);
- ``Variable(x, volatile=True)``: a module called with a volatile input runs
  under ``no_grad`` and its outputs are volatile too (today ``volatile`` is
  ignored and eval loops build graphs);
- ``type(x) == Variable`` holds for tensors again (Variable was its own type);
- ``torch.full(size, 1)`` with a Python int fill gives the default float dtype
  (int64 since 1.7);
- ``x.view(...)`` where the tensor is no longer contiguous (ops now keep their
  input's strides) falls back to ``reshape``;
- ``/`` and ``div`` between integer tensors/numbers truncate (true division since 1.5);
- ``masked_fill``/``masked_select``/``masked_scatter`` accept ByteTensor masks
  (the 0.3 mask type; only bool masks are accepted now);
- ``.cuda(async=True)`` (a SyntaxError since Python 3.7) in the script itself is
  read as ``non_blocking=True`` (``fix_async_keyword``; not in imported modules);
- ``torch.load`` without ``weights_only`` loads whole pickled objects (models,
  optimizers, ``argparse.Namespace``) as legacy torch did (``weights_only=True``
  is the default since 2.6);
- removed keywords: ``backward(retain_variables=)``, ``torch.autograd.backward(
  grad_variables=, retain_variables=)``, ``TensorDataset(data_tensor=, target_tensor=)``;
- 1-element values where 0.3 had them: ``criterion(output, target[i])`` with a
  (1, C) output (``target[i]`` was shape (1,), it is 0-dim now) and
  ``torch.cat`` of one-number losses get the 0.3 shape (1,).
Each of these acts only where current PyTorch raises, so no result of code that
runs on current PyTorch changes.
"""
import io
import tokenize

import torch

_LEGACY_TYPES = ("FloatTensor", "DoubleTensor", "HalfTensor", "ByteTensor", "CharTensor",
                 "ShortTensor", "IntTensor", "LongTensor")
_VOLATILE = "_torch_migrate_volatile"


def _self(obj, *args, **kwargs):
    return obj


def _nothing(*args, **kwargs):
    return None


def map_cuda_to_cpu():
    original_type = torch.Tensor.type

    def type_(tensor, dtype=None, *args, **kwargs):
        if isinstance(dtype, str):
            dtype = dtype.replace("torch.cuda.", "torch.")
        return original_type(tensor, dtype, *args, **kwargs)

    torch.Tensor.cuda = _self
    torch.Tensor.pin_memory = _self
    torch.Tensor.type = type_
    torch.nn.Module.cuda = _self
    torch.cuda.synchronize = _nothing
    torch.cuda.set_device = _nothing
    for name in _LEGACY_TYPES:
        setattr(torch.cuda, name, getattr(torch, name))


def install_legacy():
    _scalar_indexing()
    _volatile_variables()
    _variable_type()
    _float_full()
    _view_falls_back_to_reshape()
    _integer_division()
    _byte_masks()
    _unpickling_load()
    _removed_keywords()
    _one_element_values()


def _scalar_indexing():
    original = torch.Tensor.__getitem__

    def getitem(tensor, index):
        try:
            return original(tensor, index)
        except IndexError:
            if tensor.dim() == 0 and index == 0:  # ``loss.data[0]``
                return tensor.item()
            raise

    torch.Tensor.__getitem__ = getitem


def _volatile_variables():
    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

    meta = type(torch.autograd.Variable)
    active = []  # (module, no_grad context) for the outermost module called with a volatile input

    def call(cls, *args, **kwargs):
        volatile = kwargs.pop("volatile", False)
        tensor = type.__call__(cls, *args, **kwargs)
        if volatile:
            setattr(tensor, _VOLATILE, True)
        return tensor

    def before(module, inputs):
        if not active and any(getattr(x, _VOLATILE, False) for x in inputs):
            context = torch.no_grad()
            context.__enter__()
            active.append((module, context))

    def after(module, inputs, output):
        if active and active[-1][0] is module:
            active.pop()[1].__exit__(None, None, None)
            for tensor in output if isinstance(output, (tuple, list)) else [output]:
                if torch.is_tensor(tensor):
                    setattr(tensor, _VOLATILE, True)

    meta.__call__ = call
    register_module_forward_pre_hook(before)
    register_module_forward_hook(after)


def fix_async_keyword(source):
    """Rename the keyword argument ``async=`` to ``non_blocking=``; nothing else moves."""
    lines = source.splitlines(True)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    edits = []
    for token, following in zip(tokens, tokens[1:]):
        if token[0] == tokenize.NAME and token[1] == "async" and following[1] == "=":
            edits.append(token[2])
    for row, col in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + "non_blocking" + line[col + len("async"):]
    return "".join(lines)


def _variable_type():
    meta, variable = type(torch.autograd.Variable), torch.autograd.Variable

    def eq(cls, other):  # ``Tensor == Variable`` ends up here: Tensor's metaclass declines
        if cls is variable and isinstance(other, type) and issubclass(other, torch.Tensor):
            return True
        return type.__eq__(cls, other)

    meta.__eq__ = eq
    meta.__ne__ = lambda cls, other: not eq(cls, other)
    meta.__hash__ = type.__hash__


def _float_full():
    original = torch.full

    def full(size, fill_value, *args, **kwargs):
        if isinstance(fill_value, int) and not args and "dtype" not in kwargs and "out" not in kwargs:
            kwargs["dtype"] = torch.get_default_dtype()
        return original(size, fill_value, *args, **kwargs)

    torch.full = full


def _view_falls_back_to_reshape():
    original = torch.Tensor.view

    def view(tensor, *shape):
        try:
            return original(tensor, *shape)
        except RuntimeError as exc:
            if "view size is not compatible" not in str(exc):
                raise
            return tensor.reshape(*shape)

    torch.Tensor.view = view


def _integral(x):
    if torch.is_tensor(x):
        return not (x.is_floating_point() or x.is_complex())
    return isinstance(x, int)


def _integer_division():
    def truncating(original):
        def divide(a, b, *args, **kwargs):
            if not args and not kwargs and torch.is_tensor(a) and _integral(a) and _integral(b):
                return original(a, b, rounding_mode="trunc")
            return original(a, b, *args, **kwargs)
        return divide

    torch.div = truncating(torch.div)
    torch.Tensor.div = truncating(torch.Tensor.div)
    torch.Tensor.div_ = truncating(torch.Tensor.div_)
    torch.Tensor.__truediv__ = truncating(torch.Tensor.__truediv__)
    torch.Tensor.__itruediv__ = truncating(torch.Tensor.__itruediv__)


def _byte_masks():
    def accepting_bytes(original):
        def masked(tensor, mask, *args, **kwargs):
            if torch.is_tensor(mask) and mask.dtype == torch.uint8:
                mask = mask.bool()
            return original(tensor, mask, *args, **kwargs)
        return masked

    for name in ("masked_fill", "masked_fill_", "masked_select", "masked_scatter", "masked_scatter_"):
        setattr(torch.Tensor, name, accepting_bytes(getattr(torch.Tensor, name)))


def _unpickling_load():
    original = torch.load
    if "weights_only" not in getattr(original, "__code__", _nothing.__code__).co_varnames:
        return  # torch < 1.13 always unpickles

    def load(*args, **kwargs):
        kwargs.setdefault("weights_only", False)
        return original(*args, **kwargs)

    torch.load = load


def _renaming(function, renames):
    def renamed(*args, **kwargs):
        for old, new in renames.items():
            if old in kwargs:
                kwargs.setdefault(new, kwargs.pop(old))
        return function(*args, **kwargs)
    return renamed


def _removed_keywords():
    torch.Tensor.backward = _renaming(torch.Tensor.backward, {"retain_variables": "retain_graph"})
    torch.autograd.backward = _renaming(torch.autograd.backward, {"retain_variables": "retain_graph",
                                                                   "grad_variables": "grad_tensors"})
    dataset = torch.utils.data.TensorDataset
    init = dataset.__init__

    def legacy_init(self, *tensors, data_tensor=None, target_tensor=None):
        given = [t for t in (data_tensor, target_tensor) if t is not None]
        init(self, *(tensors + tuple(given)))

    dataset.__init__ = legacy_init


def _one_element_values():
    import torch.nn.functional as F

    def class_target_loss(original):
        def loss(input, target, *args, **kwargs):
            if torch.is_tensor(target) and target.dim() == 0 and torch.is_tensor(input) and input.dim() > 1 \
                    and input.size(0) == 1:
                target = target.unsqueeze(0)
            return original(input, target, *args, **kwargs)
        return loss

    for name in ("cross_entropy", "nll_loss", "multi_margin_loss"):
        setattr(F, name, class_target_loss(getattr(F, name)))
    cat = torch.cat

    def legacy_cat(tensors, *args, **kwargs):
        tensors = [t.unsqueeze(0) if torch.is_tensor(t) and t.dim() == 0 else t for t in tensors]
        return cat(tensors, *args, **kwargs)

    torch.cat = legacy_cat
