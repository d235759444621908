"""`forget --user-ids-file FILE`: the ids to erase, one per line, read and checked before anything is erased.

Surrounding whitespace is ignored, and so are lines that are blank or only
whitespace, and a repeated id (erased once). A line that is too long, not
UTF-8, or holds a control character (a tab, a NUL, a line separator) inside
the id stops the command before it erases anything, with one line naming the
line number; the line's content is never printed (an id is personal data).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path

from warehouse.errors import UserError

MAX_ID_CHARACTERS = 512  # a longer line is no user id (a pasted document, a file of the wrong kind)
_CONTROL = {"Cc", "Zl", "Zp"}


@dataclass
class UserIds:
    """The ids of a file, each with the number of the line it was first read on."""

    ids: list[str]
    lines: list[int]
    duplicates: int  # lines skipped because they repeat an earlier id


def read_user_ids(path: Path) -> UserIds:
    """The distinct ids of `path`, in the file's order (module note); a UserError for a file that cannot be used."""
    if not path.is_file():
        raise UserError(f"--user-ids-file {path}: no such file")
    seen: dict[str, int] = {}
    duplicates = 0
    try:
        with path.open("rb") as file:
            for number, raw in enumerate(iter(lambda: file.readline(MAX_ID_CHARACTERS * 4 + 2), b""), start=1):
                user_id = _checked(path, number, raw)
                if not user_id:
                    continue
                if user_id in seen:
                    duplicates += 1
                else:
                    seen[user_id] = number
    except OSError as exc:
        raise UserError(f"--user-ids-file {path}: cannot be read ({exc.strerror})") from None
    if not seen:
        raise UserError(f"--user-ids-file {path}: holds no user id (one per line)")
    return UserIds(list(seen), list(seen.values()), duplicates)


def _checked(path: Path, number: int, raw: bytes) -> str:
    """The id of one line (empty for a blank line), or a UserError naming the line, never its content."""
    where = f"--user-ids-file {path}, line {number}"
    if not raw.endswith(b"\n") and len(raw) > MAX_ID_CHARACTERS * 4:
        raise UserError(f"{where}: longer than {MAX_ID_CHARACTERS} characters; no user id is (nothing was erased)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{where}: not UTF-8 text (nothing was erased)") from None
    user_id = text.strip()
    if len(user_id) > MAX_ID_CHARACTERS:
        raise UserError(f"{where}: longer than {MAX_ID_CHARACTERS} characters; no user id is (nothing was erased)")
    if any(unicodedata.category(character) in _CONTROL for character in user_id):
        raise UserError(f"{where}: holds a control character (nothing was erased; the line is not shown)")
    return user_id
