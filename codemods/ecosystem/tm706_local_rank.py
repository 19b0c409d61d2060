"""TM706: ``--local_rank`` accepts ``--local-rank`` and defaults to ``$LOCAL_RANK``."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.base import Example, Rule
from codemods.syntax import argument, code, keyword, string

SPELLINGS = ("--local_rank", "--local-rank")
PARSER = "import argparse\n\nparser = argparse.ArgumentParser()\n"


class LocalRank(Rule):
    """``python -m torch.distributed.launch`` passed ``--local_rank=N`` to each process until 2.0 and
    ``--local-rank=N`` since; ``torchrun`` (which replaces it) passes nothing and sets ``LOCAL_RANK`` in
    the environment. A legacy script declaring only ``--local_rank`` therefore dies with "unrecognized
    arguments: --local-rank=0" under the current launcher and runs every process as rank 0 (its
    default) under torchrun. The fix accepts both spellings (argparse gives both the same ``dest``)
    and takes the default from ``LOCAL_RANK`` when it is set, so the script runs under either launcher
    and unchanged by hand (``LOCAL_RANK`` unset: the old default)."""

    code = "TM706"
    name = "local-rank"
    summary = "`--local_rank` also accepts `--local-rank` (torch>=2.0 launcher) and defaults to `$LOCAL_RANK` (torchrun)"
    triggers = ("local_rank", "local-rank")
    changes = (
        Example(PARSER + "parser.add_argument('--local_rank', type=int, default=0)\n",
                "import argparse\nimport os\n\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument('--local_rank', '--local-rank', type=int, default=int(os.environ.get('LOCAL_RANK', 0)))\n"),
        Example(PARSER + "parser.add_argument(\"--local-rank\", type=int, help='set by the launcher')\n",
                "import argparse\nimport os\n\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument(\"--local-rank\", \"--local_rank\", type=int, help='set by the launcher', "
                "default=int(os.environ['LOCAL_RANK']) if 'LOCAL_RANK' in os.environ else None)\n"),
    )
    keeps = (
        PARSER + "parser.add_argument('--local_rank', '--local-rank', type=int, default=int(os.environ.get('LOCAL_RANK', 0)))\n",
        PARSER + "parser.add_argument('--rank', type=int, default=0)\n",
        PARSER + "parser.add_argument('--local_rank', type=str, default='0')\n",  # not an int: the script decides
    )

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) is not cst.Attribute or node.func.attr.value != "add_argument":
            return
        names = [string(a.value) for a in node.args if a.keyword is None]
        given = [n for n in names if n in SPELLINGS]
        kind = argument(node, "type")
        if len(given) != 1 or len(names) > 2 or kind is None or code(kind.value) != "int":
            return
        default = argument(node, "default")
        if default is not None and "LOCAL_RANK" in code(default.value):
            return
        other = SPELLINGS[1 - SPELLINGS.index(given[0])]
        self.report(node, f"`{given[0]}` only: the torch>=2.0 launcher passes `--local-rank`, torchrun sets "
                          f"`LOCAL_RANK` instead; accept `{other}` too and default to `$LOCAL_RANK`",
                    lambda call: self._fix(call, given[0], other, default))

    def _fix(self, call: cst.Call, given: str, other: str, default: Optional[cst.Arg]) -> cst.Call:
        self.ctx.add_import("os")
        position = next(i for i, a in enumerate(call.args) if a.keyword is None and string(a.value) == given)
        quote = call.args[position].value.value[0]
        alias = cst.Arg(cst.SimpleString(f"{quote}{other}{quote}"))
        args = [*call.args[:position + 1], alias, *call.args[position + 1:]]
        if default is None:  # argparse's default is None: keep it where LOCAL_RANK is unset
            value = "int(os.environ['LOCAL_RANK']) if 'LOCAL_RANK' in os.environ else None"
            return call.with_changes(args=[*args[:-1], args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT),
                                           keyword("default", cst.parse_expression(value))])
        value = cst.parse_expression(f"int(os.environ.get('LOCAL_RANK', {code(default.value)}))")
        return call.with_changes(args=[a.with_changes(value=value) if a is default else a for a in args])


RULE = LocalRank
