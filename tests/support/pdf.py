"""Read a PDF that chromium printed, without a PDF library (none is a dependency): its streams, its links, its
text through the fonts' ToUnicode maps, and the fonts of each page (which glyphs they carry). Enough for
chromium's (Skia's) output, not a general PDF reader."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

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


@dataclass(frozen=True)
class PageFont:
    """A font a page uses: its family, whether its glyph programs are in the file, and which text each code
    draws (its ToUnicode map, without the codes that draw the .notdef glyph, the box of a missing glyph)."""

    family: str
    has_glyphs: bool
    draws: dict[int, str]


def _reference(head: bytes, key: bytes) -> int | None:
    found = re.search(rb"/" + key + rb"\s+(\d+)\s+0\s+R", head)
    return int(found[1]) if found else None


def _page_font(found: dict[int, tuple[bytes, bytes | None]], number: int) -> PageFont:
    head = found[number][0]
    descriptor_head, notdef = b"", {0}  # Type0 with Identity-H (chromium's TrueType): code = glyph id, 0 is .notdef
    if (descendants := re.search(rb"/DescendantFonts\s*\[\s*(\d+)\s+0\s+R", head)) is not None:
        descriptor = _reference(found[int(descendants[1])][0], b"FontDescriptor")
    else:
        descriptor = _reference(head, b"FontDescriptor")
    if descriptor is not None:
        descriptor_head = found[descriptor][0]
    family = re.search(rb"/FontFamily\s*\(((?:\\.|[^\\)])*)\)", descriptor_head)
    name = re.search(rb"/(?:FontName|BaseFont)\s*/(?:[A-Z]{6}\+)?([^\s/>]+)", descriptor_head or head)
    has_glyphs = re.search(rb"/FontFile[23]?\s+\d+\s+0\s+R", descriptor_head) is not None
    if b"/Subtype /Type3" in head:  # glyphs drawn by content streams named in /CharProcs; chromium's /g0 is .notdef
        has_glyphs = b"/CharProcs" in head
        differences = re.search(rb"/Differences\s*\[(.*?)\]", head, re.DOTALL)
        notdef, code = set(), 0
        for token in re.findall(rb"\d+|/[^\s/\]]+", differences[1] if differences else b""):
            if token[:1] != b"/":
                code = int(token)
                continue
            if token == b"/g0":
                notdef.add(code)
            code += 1
    to_unicode = _reference(head, b"ToUnicode")
    stream = found.get(to_unicode, (b"", None))[1] if to_unicode is not None else None
    draws = {code: text for code, text in (_cmap(stream) if stream else {}).items() if code not in notdef}
    label = family[1] if family else name[1] if name else b"?"
    return PageFont(label.decode("latin-1"), has_glyphs, draws)


def page_fonts(pdf: bytes) -> list[list[PageFont]]:
    """The fonts of each page, in page order (the /Kids of the page tree, one level: chromium's)."""
    found = objects(pdf)
    kids = next(re.search(rb"/Kids\s*\[(.*?)\]", h, re.DOTALL) for h, _ in found.values() if b"/Type /Pages" in h)
    pages = []
    for page in (int(n) for n in re.findall(rb"(\d+)\s+0\s+R", kids[1])):
        block = re.search(rb"/Font\s*<<(.*?)>>", found[page][0], re.DOTALL)
        numbers = [int(n) for _, n in _FONT_ENTRY.findall(block[1])] if block else []
        pages.append([_page_font(found, number) for number in numbers])
    return pages
