"""Untrusted text in prompts: it can never forge a field boundary or a speaker.

The rule (README, "Injection-safe prompts"): every piece of text that comes from data or from a
model — conversation turns, candidate and reference replies, replies of the evaluated model,
answers of earlier calls — passes through :func:`untrusted` before it is put into a prompt.

- **Field markers.** DSPy separates prompt fields with ``[[ ## name ## ]]`` lines. Inside data
  any such marker (any spacing, any number of ``#``) is rewritten as ``(## name ##)``, so a
  candidate reply cannot open a ``reference_reply`` field or claim ``[[ ## completed ## ]]``.
  The project's JSON adapter applies this to every input field, whatever its type, as a second
  line of defence.
- **Speakers.** A conversation is written as blocks ``Person: ...`` / ``Assistant: ...``. A line
  inside untrusted text that starts like a speaker label (``Person:``, ``Assistant:``,
  ``System:``, ``User:``, ``Human:``, ``AI:``, ``Participant:``, ``Model:``; any case, any
  indentation, after quote, emphasis or heading marks: ``> ``, ``**``, ``## Person:``) is
  prefixed with ``(quoted)``, so only the formatter's own labels start a turn.

- **Look-alikes.** Both rules read the text as a person (or a model) would: every Unicode line
  break (``\r``, ``\v``, ``\f``, U+0085, U+2028, U+2029, ...) is a line break (and is
  rewritten as ``\n``); zero-width, bidi and other invisible format characters are ignored;
  letters of other scripts that look like Latin ones (Cyrillic ``Р``, Greek ``Α``, Lisu ``ꓑ``,
  Coptic ``Ⲣ``, ...), fullwidth and mathematical letters, and colon, bracket and hash
  look-alikes (``：``, ``［``, ``＃``) count as the characters they imitate; ``⟦`` and ``〚``,
  each drawn as two brackets, read as ``[[``. So ``Ρеrson:`` after a U+2028, a single
  ``⟦ ## completed ## ⟧``, or ``［［ ## completed ## ］］`` with a zero-width space inside, is
  defused like the plain one.

Text without markers or label-like lines passes unchanged but for its line breaks (prompts of
ordinary data, and the request-cache keys made from them, do not change).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

__all__ = [
    "QUOTED_PREFIX",
    "neutralize",
    "neutralize_markers",
    "neutralize_speakers",
    "neutralize_value",
    "normalize_breaks",
    "untrusted",
]

QUOTED_PREFIX = "(quoted) "
"""What a label-like line inside untrusted text is prefixed with."""

_MARKER = re.compile(r"\[\s*\[\s*(#+)\s*([^\[\]\n]*?)\s*(#+)\s*\]\s*\]")
_OPEN = re.compile(r"\[\s*\[\s*#")
_CLOSE = re.compile(r"#\s*\]\s*\]")
_SPEAKER = re.compile(
    r"^([ \t>*_\-\"'`#]*)(person|assistant|system|user|human|ai|participant|model|bot)"
    r"([*_ \t]*(?:\([^)\n]*\))?[*_ \t]*[:：])",
    re.IGNORECASE | re.MULTILINE,
)
_BREAKS = re.compile("\r\n|[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""Every line break of Unicode (``str.splitlines``) but ``\n``: each becomes ``\n``."""

# Letters of other scripts drawn like the Latin ones of the labels and markers (Cyrillic,
# Greek, Armenian, Cherokee, Latin small capitals and IPA), and the colon, bracket and hash
# look-alikes NFKC leaves alone. NFKC itself folds fullwidth, mathematical and circled forms.
_LOOKALIKES = {
    "a": "аɑαа⍺",
    "b": "ЬЪβᏏ",
    "c": "сϲᴄⅽ",
    "d": "ԁᏧⅾ",
    "e": "еєҽεᴇ",
    "h": "һнᏂℎ",
    "i": "іїιɪⅰ",
    "l": "ӏⅼǀ",
    "m": "мⅿᴍ",
    "n": "ոпηɴ",
    "o": "оοօᴏσ০",
    "p": "рρᴘ",
    "r": "гᴦʀꭇ",
    "s": "ѕꜱ",
    "t": "тτᴛ",
    "u": "υսᴜ",
    "y": "уүγʏ",
    "A": "АΑᎪ",
    "B": "ВΒᏴ",
    "C": "СϹᏟ",
    "E": "ЕΕᎬ",
    "H": "НΗᎻ",
    "I": "ІΙӀ",
    "M": "МΜᎷ",
    "N": "Ν",
    "O": "ОΟՕ",
    "P": "РΡᏢ",
    "S": "ЅᏚ",
    "T": "ТΤᎢ",
    "U": "Ս",
    "Y": "ҮΥ",
    ":": "꞉∶ː˸։׃܃܄᛬︰",
    "[": "【⁅〔⦋",
    "]": "】⁆〕⦌",
    "[[": "⟦〚",  # one character drawn as two brackets: a single ⟦ ## x ## ⟧ is a marker
    "]]": "⟧〛",
    "#": "♯⌗",
}
# Lisu and Coptic capitals drawn like Latin ones (ꓑ, Ⲣ: P), and Coptic small ones
_LOOKALIKES_MORE = {
    "A": "ꓮⲀ",
    "B": "ꓐⲂ",
    "C": "ꓚⲤ",
    "D": "ꓓ",
    "E": "ꓰⲈ",
    "F": "ꓝ",
    "G": "ꓖ",
    "H": "ꓧⲎ",
    "I": "ꓲⲒ",
    "J": "ꓙ",
    "K": "ꓗⲔ",
    "L": "ꓡ",
    "M": "ꓟⲘ",
    "N": "ꓠⲚ",
    "O": "ꓳⲞ",
    "P": "ꓑⲢ",
    "R": "ꓣ",
    "S": "ꓢ",
    "T": "ꓔⲦ",
    "U": "ꓴ",
    "V": "ꓦ",
    "W": "ꓪ",
    "X": "ꓫⲬ",
    "Y": "ꓬⲨ",
    "Z": "ꓜ",
    "a": "ⲁ",
    "o": "ⲟ",
    "p": "ⲣ",
    "c": "ⲥ",
}
_FOLD = {
    ord(c): latin
    for table in (_LOOKALIKES, _LOOKALIKES_MORE)
    for latin, chars in table.items()
    for c in chars
}


def _ignorable(char: str) -> bool:
    """Invisible in a prompt: format characters (zero-width spaces and joiners, bidi
    controls, soft hyphen, BOM, tags) and the other default-ignorable code points."""
    code = ord(char)
    return (
        unicodedata.category(char) == "Cf"
        or code in (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0)
        or 0x180B <= code <= 0x180F
        or 0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF
    )


def _fold_char(char: str) -> str:
    """What ``char`` reads as in a label or marker ('' for an invisible one)."""
    if _ignorable(char):
        return ""
    folded = unicodedata.normalize("NFKC", char.translate(_FOLD)).translate(_FOLD)
    return "" if all(_ignorable(c) for c in folded) else folded


class _FoldTable(dict[int, str]):
    """``str.translate`` table folding every character, filled as characters are met."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        self[code] = folded = char if char.isascii() else _fold_char(char)
        return folded


_TABLE = _FoldTable()


def _skeleton(text: str) -> tuple[str, list[int]]:
    """``text`` as it reads (look-alikes folded, invisible characters dropped) and, for each
    character of it, the index in ``text`` it came from."""
    out: list[str] = []
    where: list[int] = []
    for i, char in enumerate(text):
        folded = _TABLE[ord(char)]
        out.append(folded)
        where.extend([i] * len(folded))
    where.append(len(text))
    return "".join(out), where


def _fast_skeleton(text: str) -> str:
    """The same reading without positions (only to decide whether any work is needed)."""
    return text.translate(_TABLE)


def _rewrite(text: str, edits: list[tuple[int, int, str]]) -> str:
    out, at = [], 0
    for start, end, new in sorted(edits):
        if start < at:
            continue
        out.append(text[at:start])
        out.append(new)
        at = end
    out.append(text[at:])
    return "".join(out)


def normalize_breaks(text: str) -> str:
    """``text`` with every Unicode line break (``\r``, U+2028, U+0085, ...) as ``\n``."""
    return _BREAKS.sub("\n", text)


def neutralize_markers(text: str) -> str:
    """``text`` with every DSPy-style field marker ``[[ ## x ## ]]`` defused (also one
    written with look-alike brackets or hashes, or with invisible characters inside)."""
    if text.isascii():
        if "[" not in text and "]" not in text:
            return text
        skeleton, where = text, list(range(len(text) + 1))
    else:
        quick = _fast_skeleton(text)
        if "[" not in quick and "]" not in quick:
            return text
        skeleton, where = _skeleton(text)
    edits = [
        (where[m.start()], where[m.end()], f"(## {m.group(2)} ##)")
        for m in _MARKER.finditer(skeleton)
    ]
    text = _rewrite(text, edits)
    # half markers that the full pattern missed (a marker split over lines, say)
    if not text.isascii():
        skeleton, where = _skeleton(text)
    else:
        skeleton, where = text, list(range(len(text) + 1))
    edits = [(where[m.start()], where[m.end()], "( #") for m in _OPEN.finditer(skeleton)]
    edits += [(where[m.start()], where[m.end()], "# )") for m in _CLOSE.finditer(skeleton)]
    return _rewrite(text, edits) if edits else text


def neutralize_speakers(text: str) -> str:
    """``text`` with every line that starts like a speaker label prefixed ``(quoted)`` (also
    one written with look-alike letters or colons, or with invisible characters inside)."""
    text = normalize_breaks(text)
    if text.isascii():
        if ":" not in text:
            return text
        return _SPEAKER.sub(lambda m: QUOTED_PREFIX + m.group(0), text)
    if ":" not in _fast_skeleton(text):
        return text
    skeleton, where = _skeleton(text)
    edits = []
    for m in _SPEAKER.finditer(skeleton):
        line_start = text.rfind("\n", 0, where[m.start()]) + 1  # with its invisible prefix
        edits.append((line_start, line_start, QUOTED_PREFIX))
    return _rewrite(text, edits)


def neutralize(text: str) -> str:
    """All neutralisations: line breaks made ``\n``, field markers, then speaker labels."""
    return neutralize_speakers(neutralize_markers(normalize_breaks(text)))


untrusted = neutralize
"""Alias used at the call sites: ``untrusted(item.candidate)``."""


def neutralize_value(value: Any) -> Any:
    """Field markers defused in every string inside ``value`` (lists and dicts walked)."""
    if isinstance(value, str):
        return neutralize_markers(value)
    if isinstance(value, list):
        return [neutralize_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(neutralize_value(v) for v in value)
    if isinstance(value, dict):
        return {k: neutralize_value(v) for k, v in value.items()}
    return value
