"""Rules over command files: shell scripts, Makefiles, Dockerfiles, job scripts and READMEs.

Training code is started from such files (``python -m torch.distributed.launch ...`` in ``train.sh``, a
Makefile target, a README's usage block), and a launcher change breaks them as surely as an API change breaks
the Python. They are not Python, so a ``CommandRule`` works on the text, line by line, and never parses it;
the driver hands it only the files its ``files`` patterns name.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

from codemods.finding import Finding
from codemods.versions import Version

# Names of the files a command rule reads, as globs on the file name.
COMMAND_FILES = ("*.sh", "*.bash", "*.zsh", "*.slurm", "*.sbatch", "*.pbs", "*.job", "Makefile", "makefile",
                 "GNUmakefile", "*.mk", "Dockerfile", "*.Dockerfile", "*.md", "*.rst", "README", "README.txt",
                 "*.yaml", "*.yml")


def is_command_file(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in COMMAND_FILES)


@dataclass(frozen=True)
class CommandContext:
    """What a command rule may know besides the text: the target torch, whether unsafe fixes apply, and
    ``read_script`` to look at a Python script the command starts (``None`` when the tree does not have it)."""

    min_torch: Version = ()
    unsafe_fixes: bool = False
    read_script: Callable[[str], Optional[str]] = lambda name: None


class TextRuleBase:
    """What every rule that works on text rather than a tree declares (the tree rules' ``codemods.base.Rule``
    declares the same): code, name, one-line summary, kind, triggers, documented examples, oldest torch."""

    code: str
    name: str
    summary: str
    kind = "fix"
    triggers: Sequence[str] = ()
    requires: Sequence[str] = ()
    imports: Sequence[str] = ()
    changes: Sequence = ()
    keeps: Sequence[str] = ()
    min_torch = "0.4"


class CommandRule(TextRuleBase):
    """Base class of rules over command files; ``rewrite`` returns the new text and the findings."""

    def rewrite(self, text: str, ctx: CommandContext) -> Tuple[str, List[Finding]]:
        raise NotImplementedError


def run_command_rules(text: str, rules: Sequence[type], ctx: CommandContext = CommandContext(),
                      fix: bool = True) -> Tuple[str, List[Finding]]:
    """Apply the command rules among ``rules`` to ``text`` in order; with ``fix=False`` only report."""
    findings: List[Finding] = []
    new = text
    for rule_class in rules:
        if isinstance(rule_class, type) and issubclass(rule_class, CommandRule):
            new, found = rule_class().rewrite(new, ctx)
            findings += found
    if not fix:
        for finding in findings:
            finding.applied = False
        return text, findings
    return new, findings
