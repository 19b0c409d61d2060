"""The record stream between a child run and the parent: every record kind and field, in one place.

The child (``recorder``, under whatever Python/PyTorch the script needs) builds
each record with ``make``, which refuses a field the schema does not name; the
parent (``migrate.harness.records``) builds one typed class per kind from
``KINDS`` and converts what it reads. Standard library only, Python 3.5 syntax.

The stream is a sequence of pickled dicts (protocol 2, plain Python values
only, so any parent can read what an old child wrote), each with ``"kind"``,
flushed after every record so that a crash keeps what came before it.

A field's type is written as a string the parent understands: ``int``,
``float``, ``str``, ``bool``, ``any`` (plain Python values), the name of a
value kind (``VALUES``: nested, typed too), ``list[T]``, ``map[T]`` (str keys);
a trailing ``?`` means it may be None.
"""

FORMAT = 2

# Nested values: typed on the parent side like records, never written on their own.
VALUES = {
    # An encoded tensor: every element (``data``: raw bytes, or a list where numpy cannot
    # represent the dtype), or above the full-record limit a fingerprint: a fixed random
    # ``sample`` of elements at ``sample_index`` (a sign flip shows elementwise) plus
    # ``stats`` sum / l1 / l2 / min / max (a change anywhere moves them).
    "tensor": (
        ("dtype", "str", "torch dtype name without 'torch.' (float32, int64, ...)"),
        ("shape", "list[int]", "size of each dimension"),
        ("data", "any", "every element, flattened: bytes, or a list; None for a fingerprint"),
        ("sample_index", "list[int]?", "fingerprint: flat positions of the sampled elements"),
        ("sample", "any", "fingerprint: the sampled elements, encoded like data"),
        ("stats", "map[float]?", "fingerprint: sum, l1, l2, min, max (empty for non-float dtypes)"),
    ),
    # One back-propagated root: ``source`` is the call that took it.
    "loss": (
        ("source", "str", "backward | grad"),
        ("tensor", "tensor", "the root passed to backward()/autograd.grad()"),
    ),
    # One tensor in a module's output: ``path`` says where ('' for the output itself, '[0]', "['logits']").
    "output": (
        ("path", "str", "where in the output structure"),
        ("tensor", "tensor", "its value"),
    ),
    # One leaf of a file's content, flattened: ``key`` like 'model/conv1.weight' or 'param_groups[0]/lr'.
    "entry": (
        ("key", "str", "where in the loaded object ('' for the object itself)"),
        ("type", "str", "its type name (Tensor, int, module, ndarray, image, ...)"),
        ("tensor", "tensor?", "tensors, arrays, pixels"),
        ("value", "any", "numbers, strings, booleans, None; a class name for modules; repr() for other objects"),
    ),
}

KINDS = {
    "header": (
        ("format", "int", "FORMAT of the child that wrote the stream"),
        ("python", "str", "the child's Python version"),
        ("torch", "str", "the child's torch.__version__"),
        ("device", "str", "cpu | cuda"),
        ("hooks", "str", "global (torch >= 2.0 optimizer hooks) | patched (wrapped Optimizer.step)"),
        ("seed", "int", "seed of torch, random and numpy"),
        ("compat", "bool", "the 0.3 compatibility layer was installed"),
        ("deterministic", "bool", "torch.use_deterministic_algorithms could be requested"),
        ("script", "str", "the script as the child ran it (a path in the mirror)"),
    ),
    # One optimizer step (or one backward call in backward mode); steps count from 1 and
    # anything that happens after step k-1 finished belongs to step k.
    "step": (
        ("step", "int", "number of this step, from 1"),
        ("optimizer", "int?", "index of the optimizer in construction order (None in backward mode)"),
        ("losses", "list[loss]", "every root back-propagated during the step"),
        ("grads", "map[tensor?]?", "parameter name -> gradient before the update (None: not reached)"),
        ("values", "map[tensor?]?", "parameter name -> value after the update (None: not reached)"),
        ("slots", "map[str]", "parameter name -> optimizer slot (opt0.group0.param3), for renamed variables"),
        ("time", "float", "seconds since the previous step ended"),
        ("complete", "bool", "False for a step cut short by an exception or the end of the script"),
        ("stdout_bytes", "int?", "bytes of stdout written when the step ended (places printed lines in steps)"),
        ("stderr_bytes", "int?", "the same for stderr"),
    ),
    # A top-level module call outside training (``child.evaluation`` says which calls those are), or, without
    # outputs, one a backward reached.
    "forward": (
        ("call", "int", "number of the top-level module call in the run, from 1, training calls included"),
        ("after_step", "int", "complete steps when the call was made"),
        ("site", "str", "file:line of the call in the user's tree, the file relative to the root"),
        ("module", "str", "class name of the module called"),
        ("grad_mode", "str", "no_grad (or no output needs grad) | inference_mode | grad (no backward reached it) | "
                              "backward (a backward reached it: a training call, recorded without outputs)"),
        ("training", "bool", "the module's training flag"),
        ("outputs", "list[output]", "the tensors of its output"),
    ),
    # A scalar logged through TensorBoard's SummaryWriter (add_scalar, add_scalars).
    "scalar": (
        ("after_step", "int", "complete steps when it was logged"),
        ("tag", "str", "its tag ('main_tag/tag' for add_scalars)"),
        ("value", "float?", "the value as a number (None if it is not one)"),
        ("type", "str", "type name of the value logged (float, Tensor, float64, ...)"),
        ("global_step", "int?", "the step the script gave"),
    ),
    # A record a ``logging`` logger passed to its handlers (whatever they do with it).
    "log": (
        ("after_step", "int", "complete steps when it was logged"),
        ("logger", "str", "the logger's name"),
        ("level", "str", "INFO, WARNING, ..."),
        ("message", "str", "the formatted message (record.getMessage())"),
    ),
    # A Python warning as the warnings module printed it to stderr (left out of the stderr comparison:
    # a migration is expected to remove deprecation warnings).
    "warning": (
        ("after_step", "int", "complete steps when it was shown"),
        ("category", "str", "UserWarning, DeprecationWarning, ..."),
        ("text", "str", "what warnings.formatwarning wrote: the header, the message, the source line"),
    ),
    # A file the run wrote, changed or deleted inside the mirror, read back at the end of the run.
    "artifact": (
        ("path", "str", "from the script's folder, '/'-separated (../data/x.npy above it)"),
        ("change", "str", "new | modified | deleted"),
        ("format", "str", "torch | numpy | image | text | binary | missing (deleted)"),
        ("size", "int", "bytes"),
        ("sha256", "str?", "of the bytes (None when deleted)"),
        ("entries", "list[entry]", "torch, numpy and image files: the content, flattened"),
        ("lines", "list[str]?", "text files up to the text limit: the lines"),
        ("error", "str?", "why a torch/numpy/image file could not be read (compared by sha256 then)"),
    ),
    # Localisation re-runs only (config ``layers``): one module call made during the watched step, written
    # when the call returns (so calls come in completion order: a layer before the block holding it).
    "layer": (
        ("call", "int", "number of the call in the watched step, from 1, in the order calls began"),
        ("name", "str", "qualified name: the variable holding the top-level module, then named_modules() names"),
        ("module", "str", "class name of the module"),
        ("parent", "str", "qualified name of the module call it ran inside ('' for a top-level call)"),
        ("inputs", "list[output]", "tensors among its arguments, read before the call ran"),
        ("outputs", "list[output]", "tensors of its output"),
        ("state", "map[tensor?]?", "its own parameters and buffers, at its first call in the step (None later)"),
        ("source", "str", "file:first-last lines of its class's forward in the user's tree, '' elsewhere"),
    ),
    # Localisation re-runs only: a gradient backward computed for a named parameter during the watched step.
    "param_grad": (
        ("order", "int", "position among the gradients of the step, in the order backward computed them"),
        ("name", "str", "qualified parameter name (model.fc.weight)"),
        ("tensor", "tensor", "the gradient this backward contributed"),
    ),
    # Something seen in the run that makes two runs of it differ (reported when OLD disagrees with itself).
    "hint": (
        ("after_step", "int", "complete steps when it was seen"),
        ("source", "str", "dataloader | cudnn_benchmark | seed | thread | process"),
        ("detail", "str", "what was seen, in words (seed values are compared across runs)"),
    ),
    "memory": (
        ("device", "str", "cpu | cuda"),
        ("peak_bytes", "int?", "peak tensor memory; None when it could not be measured"),
        ("method", "str", "how it was measured"),
        ("steps", "int", "steps the measurement covers"),
    ),
    "exception": (
        ("step", "int", "the step in progress when it was raised"),
        ("type", "str", "class name of the exception"),
        ("message", "str", "str() of the exception"),
        ("frames", "list[any]", "[file, line, function] of the traceback, outermost first, harness frames left out"),
        ("oom", "bool", "it was an out-of-memory error"),
    ),
    "end": (
        ("reason", "str", "finished | exit (sys.exit with a non-zero status) | exception | stopped (--steps reached)"),
        ("exit_code", "int", "the status the script exited with"),
        ("steps", "int", "complete steps"),
        ("mode", "str?", "optimizer | backward; None when no backward ever ran"),
        ("max_rss_kb", "int?", "peak resident memory of the child"),
    ),
}

_FIELD_NAMES = dict((kind, frozenset(f[0] for f in fields)) for kind, fields in KINDS.items())


def make(kind, **fields):
    """A record of ``kind``: every field the schema names, nothing else (a typo fails here, in the child)."""
    names = _FIELD_NAMES[kind]
    if len(fields) != len(names) or not names.issuperset(fields):
        raise ValueError("record %r: expected fields %s, got %s" % (kind, sorted(names), sorted(fields)))
    fields["kind"] = kind
    return fields
