"""TM7xx: the libraries and tools around torch that legacy training code leans on: mixed precision
(``torch.cuda.amp``, NVIDIA apex) and TensorBoard (tensorboardX).

Their legacy spellings are deprecated (``torch.cuda.amp.autocast`` warns on every call since 2.4),
unmaintained (apex's ``amp`` is deprecated in favour of ``torch.amp``) or a second dependency for what
torch ships (``torch.utils.tensorboard``). One rule per module, found by ``codemods.family_rules``; the
rules stand on the file's semantic model (``ctx.model``) and ``codemods.torchapi``.
"""
