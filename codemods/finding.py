"""What a rule reports about a file, as the driver, the cache and the reports see it.

Kept apart from ``base`` (which needs libcst) so that a run served entirely from
the cache never imports the engine.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Finding:
    code: str
    message: str
    line: int = 0
    col: int = 0
    end_line: int = 0
    fixable: bool = False
    unsafe: bool = False
    applied: bool = False
    hint: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)
