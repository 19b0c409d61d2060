"""TM2xx: hard-coded CUDA becomes one ``torch.device``; legacy typed constructors become factories.

0.3-era scripts pick the GPU with ``.cuda()``, ``torch.cuda.FloatTensor`` and
``if args.cuda:`` guards around every transfer. Since 0.4 the idiom is one
``device = torch.device(...)`` and ``.to(device)``, and the same code runs on a
CPU-only machine, where ``torch.cuda.FloatTensor(...)``,
``.type(torch.cuda.FloatTensor)``, ``torch.cuda.set_device`` and
``torch.cuda.synchronize`` raise.

One rule per module (``tm201_cuda_to_device.py``, ...), found by ``codemods.family_rules``; the rules
share one plan per file (``analysis.py``):

- The device. An existing ``device = torch.device(...)`` (also ``args.device =``,
  ``self.device =`` for the methods of its class, or a ``"cuda" if ... else "cpu"``
  string) is reused, and a ``device`` parameter serves its own function.
  Otherwise one is defined from the script's flag, right after the statement that
  sets it: ``args.cuda = ... torch.cuda.is_available()``, else the name that
  guards the ``.cuda()`` calls (``if opt.cuda:`` -> after ``opt = parser.parse_args()``,
  also when ``opt`` is built in ``main()`` and passed to ``train(opt)``); without a
  flag, from ``torch.cuda.is_available()`` after the imports. A flag set in
  ``main()`` and read by ``train(args)`` gets ``args.device``, attached to the
  object that carries the flag, so every function that sees the flag sees the
  device; otherwise a plain name (``device``, ``torch_device`` if ``device`` is
  taken). A use the device cannot reach (``.cuda()`` in a helper that sees neither
  the device nor the flag, or before the flag is set) is a diagnostic.
- Every ``.cuda()`` goes to that one device: on a CPU-only machine and with the
  flag on a GPU machine nothing changes; with ``--no-cuda`` on a GPU machine the
  legacy script left unguarded ``.cuda()`` calls on the GPU (mixed devices), the
  migrated one stays on the CPU.
- ``.cuda(k)`` keeps its index in the device string (``"cuda:k"``) when the file
  uses one literal index (0, or k without unindexed calls) and never calls
  ``set_device``; other indices are diagnostics. ``.cuda()`` means the current
  device, which is what ``torch.device("cuda")`` means too.
- ``if <flag>:`` around transfers only (``x = x.cuda()``, ``model.cuda()``, with an
  ``else`` of ``.cpu()`` or the value itself; ``return x.cuda()`` only with such an
  ``else``) disappears when the flag is the device's condition: when it is false the
  device is the CPU and ``.to(cpu)`` returns its receiver itself. ``if x.is_cuda:
  y = y.cuda()`` becomes ``y = y.to(x.device)``. Storages (``map_location=lambda
  storage, loc: storage.cuda()``) get ``.to(device=...)``: their ``to`` takes no
  positional device.
- ``torch.FloatTensor(2, 3)`` (uninitialised memory) becomes ``torch.empty(2, 3)``,
  ``torch.FloatTensor([1, 2])`` (data) ``torch.tensor([1, 2], dtype=torch.float32)``.
  One argument of unknown kind is a diagnostic: a size or a sequence? a float32
  numpy array, whose memory the legacy constructor shares? When an in-place
  initialiser follows (``torch.LongTensor(n).random_(0, 10)``) the contents did not
  matter, so the argument is taken for a size by an unsafe fix.
"""
