"""Read a PDF that chromium printed, without a PDF library (none is a dependency): its streams, its links, and
its text through the fonts' ToUnicode maps. Enough for chromium's (Skia's) output, not a general PDF reader."""

from __future__ import annotations

import re
import zlib

_OBJECT = re.compile(rb"(\d+) 0 obj(.*?)endobj", re.DOTALL)
_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.DOTALL)
_FONT_ENTRY = re.compile(rb"/([A-Za-z0-9_.+-]+)\s+(\d+)\s+0\s+R")
_TOKEN = re.compile(rb"<([0-9A-Fa-f\s]*)>|\[|\]|/([A-Za-z0-9_.+-]+)|(-?[\d.]+)|([A-Za-z'\"]+)|\((?:\\.|[^\\)])*\)")


def _inflate(data: bytes) -> bytes:
    try:
        return zlib.decompress(data)
    except zlib.error:
        return data


def objects(pdf: bytes) -> dict[int, tuple[bytes, bytes | None]]:
    """Object number -> (its dictionary text, its inflated stream or None)."""
    found = {}
    for match in _OBJECT.finditer(pdf):
        body = match[2]
        stream = _STREAM.search(body)
        found[int(match[1])] = (body[: stream.start()] if stream else body, _inflate(stream[1]) if stream else None)
    return found


def everything(pdf: bytes) -> bytes:
    """The file with every stream inflated after it: where links, scripts and addresses would show."""
    return pdf + b"".join(stream for _, stream in objects(pdf).values() if stream is not None)


def _cmap(data: bytes) -> dict[int, str]:
    """A ToUnicode CMap: glyph code -> text."""
    mapping: dict[int, str] = {}

    def text(hexits: bytes) -> str:
        return bytes.fromhex(hexits.decode()).decode("utf-16-be", errors="replace")

    for block in re.findall(rb"beginbfchar(.*?)endbfchar", data, re.DOTALL):
        for code, value in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            mapping[int(code, 16)] = text(value)
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", data, re.DOTALL):
        for low, high, value in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            first = text(value)
            for offset, code in enumerate(range(int(low, 16), int(high, 16) + 1)):
                mapping[code] = first[:-1] + chr(ord(first[-1]) + offset) if first else ""
    return mapping


def text(pdf: bytes) -> str:
    """The text of every page's content streams, run after run (a space between text objects)."""
    found = objects(pdf)
    to_unicode: dict[int, dict[int, str]] = {}  # font object -> its map
    for number, (head, _) in found.items():
        reference = re.search(rb"/ToUnicode\s+(\d+)\s+0\s+R", head)
        if reference and found.get(int(reference[1]), (b"", None))[1] is not None:
            to_unicode[number] = _cmap(found[int(reference[1])][1])
    fonts: dict[bytes, dict[int, str]] = {}  # resource name -> map (chromium names fonts once per document)
    for head, _ in found.values():
        for block in re.findall(rb"/Font\s*<<(.*?)>>", head, re.DOTALL):
            for name, number in _FONT_ENTRY.findall(block):
                if int(number) in to_unicode:
                    fonts[name] = to_unicode[int(number)]
    pieces: list[str] = []
    for _, stream in found.values():
        if stream is None or b"Tf" not in stream:
            continue
        current: dict[int, str] = {}
        operands: list[bytes] = []
        for token in _TOKEN.finditer(stream):
            hexits, name, operator = token[1], token[2], token[4]
            if name is not None:
                operands.append(b"/" + name)
            elif hexits is not None:
                digits = re.sub(rb"\s", b"", hexits)
                codes = [int(digits[i : i + 4], 16) for i in range(0, len(digits) - 3, 4)]
                pieces.append("".join(current.get(code, "") for code in codes))
            elif operator == b"Tf":
                fonts_named = [operand for operand in operands if operand.startswith(b"/")]
                current = fonts.get(fonts_named[-1][1:], {}) if fonts_named else {}
                operands = []
            elif operator in (b"ET", b"BT"):
                pieces.append(" ")
                operands = []
            elif operator is not None:
                operands = []
    return "".join(pieces)
