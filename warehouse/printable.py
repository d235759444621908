"""Text from data and file names made safe for a terminal or a log line.

Upstream values and file names may hold control characters: an escape sequence (ESC) that recolours,
moves or retitles a terminal, a carriage return that overwrites what was printed, a newline that forges a
line of a log, a right-to-left override that shows a name backwards. `printable` shows each of them as a
visible escape instead (`\\x1b`, `\\r`, `\\n`, `\\u202e`); everything else is kept as it is.
"""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# C0 controls, DEL, C1 controls
_CONTROLS = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
# bidirectional marks, embeddings, overrides and isolates; line and paragraph separators; BOM / zero-width no-break
_INVISIBLE = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029, 0xFEFF]

_TABLE = {
    code: _NAMED.get(chr(code), f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    for code in (*_CONTROLS, *_INVISIBLE)
}


def printable(value: object) -> str:
    """`str(value)` with every control, bidi and line-separator character shown as a visible escape."""
    return str(value).translate(_TABLE)
