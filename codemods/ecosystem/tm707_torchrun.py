"""TM707: ``python -m torch.distributed.launch`` in shell scripts, Makefiles and READMEs becomes ``torchrun``."""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from codemods.base import Example
from codemods.commands import CommandContext, CommandRule
from codemods.finding import Finding
from codemods.versions import parse

_GAP = r"(?:[ \t]|\\\r?\n)+"  # blanks, and line continuations
_LAUNCH = re.compile(
    r"(?P<python>(?<![\w./$-])(?:\$\{?\w+\}?|\$\(\w+\)|(?:[\w.~-]*/)*python(?:\d+(?:\.\d+)?)?))"
    rf"(?P<flags>(?:{_GAP}-[A-Za-z]\w*)*){_GAP}-m{_GAP}torch\.distributed\.launch(?![\w.])")
_COMMAND_END = re.compile(r"(?<!\\)\r?\n|;|&&|\|\||\||(?<!\S)#")
# ``--use_env`` with the blanks after it (or, last on its line, the blanks before it): the layout stays.
_USE_ENV = re.compile(r"[ \t]+--use[_-]env(?:=\S+)?(?=[ \t]*(?:\\?\r?\n|$))|(?<=\s)--use[_-]env(?:=\S+)?[ \t]*")
_PLAIN_PYTHON = re.compile(r"^python3?$")
_SUPPRESS = re.compile(r"#\s*torch-migrate:\s*ignore(?:\[[^\]]*TM707[^\]]*\]|(?!\[))")


# Launcher options that take no value (``-m``: the script is a module).
_FLAGS = frozenset({"--use_env", "--use-env", "--no_python", "--no-python", "-m", "--module", "--standalone",
                    "--run_path", "--run-path"})


def _split(arguments: str) -> Tuple[int, Optional[str]]:
    """Where the launcher's own options end in ``arguments`` (the rest is the script and its arguments),
    and the script when it is a ``.py`` file."""
    expects_value = False
    for token in re.finditer(r"[^\s\\]+", arguments):
        word = token.group()
        if expects_value:
            expects_value = False
        elif word.startswith("-"):
            expects_value = "=" not in word and word not in _FLAGS
        else:
            return token.start(), word.strip("'\"") if word.strip("'\"").endswith(".py") else None
    return len(arguments), None


def _local_rank_use(source: Optional[str]) -> str:
    """How the launched script learns its local rank: ``env``, ``argparse`` (TM706 gives it the
    environment default), ``none``, ``other`` (read some way the rewrite cannot follow) or ``unknown``."""
    if source is None:
        return "unknown"
    if "LOCAL_RANK" in source:
        return "env"
    if re.search(r"add_argument\(\s*['\"]--local[_-]rank['\"]", source):
        return "argparse"
    return "other" if re.search(r"local[_-]rank", source) else "none"


class Torchrun(CommandRule):
    """``torch.distributed.launch`` is deprecated (since 1.10: a FutureWarning, "use torchrun") and will be
    removed; ``torchrun`` (1.10; ``python -m torch.distributed.run`` from 1.9) takes the same options and sets
    ``LOCAL_RANK`` in each worker's environment. What it does not do is pass ``--local_rank=N`` to the
    script, as ``launch`` did without ``--use_env``. So the rewrite is safe only where the script learns its
    rank from the environment: ``--use_env`` was given, the script reads ``LOCAL_RANK``, or its argparse
    ``--local_rank`` defaults to it (TM706 makes it so) or it never reads one. Otherwise, or where the script
    is not in the tree, the fix is unsafe. ``python``/``python3`` become ``torchrun``; another interpreter
    (``$PYTHON``, ``venv/bin/python``) keeps its place as ``... -m torch.distributed.run``, the same program.
    ``--use_env`` goes (``torchrun`` always sets the environment)."""

    code = "TM707"
    name = "torchrun"
    summary = "`python -m torch.distributed.launch` in shell scripts, Makefiles and READMEs becomes `torchrun` (`--use_env` dropped)"
    triggers = ("torch.distributed.launch",)
    min_torch = "1.9"
    changes = (
        Example("python -m torch.distributed.launch --nproc_per_node=4 --use_env train.py --epochs 90\n",
                "torchrun --nproc_per_node=4 train.py --epochs 90\n"),
        Example("train:\n\t$(PYTHON) -m torch.distributed.launch --nproc_per_node=$(GPUS) \\\n"
                "\t\t--use_env main.py --cfg $(CFG)\n",
                "train:\n\t$(PYTHON) -m torch.distributed.run --nproc_per_node=$(GPUS) \\\n"
                "\t\tmain.py --cfg $(CFG)\n"),
        Example("python3 -m torch.distributed.launch --nproc_per_node 8 tools/train.py cfg.py\n",
                "torchrun --nproc_per_node 8 tools/train.py cfg.py\n", unsafe=True),
        Example("$PYTHON -u -m torch.distributed.launch --nnodes=2 --use-env train.py\n",
                "$PYTHON -u -m torch.distributed.run --nnodes=2 train.py\n"),
    )
    keeps = (
        "torchrun --nproc_per_node=4 train.py\n",
        "python -m torch.distributed.run --nproc_per_node=4 train.py\n",
        "# We used to call torch.distributed.launch here.\npython train.py\n",
        "python -m torch.distributed.launcher_tools --help\n",
        "python -m torch.distributed.launch --use_env train.py  # torch-migrate: ignore[TM707]\n",
        "echo 'see https://pytorch.org/docs/stable/distributed.html#launch-utility'\n",
    )

    def rewrite(self, text: str, ctx: CommandContext) -> Tuple[str, List[Finding]]:
        findings: List[Finding] = []
        pieces: List[str] = []
        done = 0
        for match in _LAUNCH.finditer(text):
            if match.start() < done:
                continue
            end_match = _COMMAND_END.search(text, match.end())
            end = end_match.start() if end_match else len(text)
            line_end = text.find("\n", end)
            line_text = text[text.rfind("\n", 0, match.start()) + 1:len(text) if line_end < 0 else line_end]
            if _SUPPRESS.search(line_text):
                continue
            arguments = text[match.end():end]
            new_command, finding = self._decide(match, arguments, text, ctx)
            findings.append(finding)
            if finding.applied:
                pieces += [text[done:match.start()], new_command]
                done = end
        pieces.append(text[done:])
        return "".join(pieces), findings

    def _decide(self, match: "re.Match", arguments: str, text: str, ctx: CommandContext) -> Tuple[str, Finding]:
        options_end, script = _split(arguments)
        use_env = any(found.start() < options_end for found in _USE_ENV.finditer(arguments))
        plain = _PLAIN_PYTHON.match(match.group("python"))
        if plain and (not ctx.min_torch or ctx.min_torch >= parse("1.10")):
            launcher = "torchrun"
        else:
            launcher = f"{match.group('python')}{match.group('flags')} -m torch.distributed.run"
        new_command = launcher + _USE_ENV.sub(lambda found: "" if found.start() < options_end else found.group(),
                                              arguments)
        rank = "env" if use_env else _local_rank_use(ctx.read_script(script) if script else None)
        why = {"env": "", "none": "", "argparse": " (its `--local_rank` must default to `$LOCAL_RANK`: TM706)",
               "other": f"; `{script}` reads its local rank some way other than `LOCAL_RANK` or an argparse "
                        "`--local_rank`, which torchrun no longer passes",
               "unknown": "; the launched script is not in the tree, and torchrun no longer passes "
                          "`--local_rank` (it sets `LOCAL_RANK`)"}[rank]
        unsafe = rank in ("other", "unknown")
        line = text.count("\n", 0, match.start()) + 1
        col = match.start() - text.rfind("\n", 0, match.start())
        message = f"`torch.distributed.launch` is deprecated: `{launcher.split(' -m ')[0] if launcher == 'torchrun' else launcher}`{why}"
        if ctx.min_torch and ctx.min_torch < parse(self.min_torch):
            message += f" (left unchanged: torch.distributed.run needs torch >= {self.min_torch})"
            return new_command, Finding(self.code, message, line, col, line, fixable=False)
        applied = not unsafe or ctx.unsafe_fixes
        return new_command, Finding(self.code, message, line, col, line, fixable=True, unsafe=unsafe,
                                    applied=applied)


RULE = Torchrun
