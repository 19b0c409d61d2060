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
    cell: int = 0  # in a notebook: the cell (1-based, among all cells) that line, col and end_line are in

    def to_dict(self) -> dict:
        data = dict(self.__dict__)
        if not self.cell:
            del data["cell"]
        return data
