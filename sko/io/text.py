"""Whether a loader's source is the model's XML text or a path to its file."""

from __future__ import annotations

import codecs

__all__ = ["is_xml_text", "decoded"]

#: byte-order marks and the codecs that read past them (UTF-8's first: it is not a UTF-16 mark)
_MARKS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def decoded(data: bytes | bytearray) -> str:
    """``data`` as text: by its byte-order mark (UTF-8 or UTF-16, as a file saved by an editor
    starts), else UTF-8. Raises :class:`UnicodeDecodeError` for bytes of neither."""
    data = bytes(data)
    codec = next((name for mark, name in _MARKS if data.startswith(mark)), "utf-8")
    return data.decode(codec)


def is_xml_text(source) -> bool:
    """Whether ``source`` (str or bytes) is XML text rather than a path: its first character
    after a byte-order mark (UTF-8 or UTF-16) and white space is ``<`` (a file saved with a
    byte-order mark starts with one, and the XML parsers take it)."""
    if isinstance(source, str):
        return source.lstrip("\ufeff \t\r\n").startswith("<")
    if isinstance(source, (bytes, bytearray)):
        data = bytes(source)
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            try:
                return is_xml_text(decoded(data))
            except UnicodeDecodeError:
                return False
        return data.removeprefix(codecs.BOM_UTF8).lstrip().startswith(b"<")
    return False
