"""Whether a loader's source is the model's XML text or a path to its file."""

from __future__ import annotations

__all__ = ["is_xml_text"]


def is_xml_text(source) -> bool:
    """Whether ``source`` (str or bytes) is XML text rather than a path: its first character
    after a UTF-8 byte-order mark and white space is ``<`` (a file saved with a byte-order mark
    starts with one, and the XML parsers take it)."""
    if isinstance(source, str):
        return source.lstrip("\ufeff \t\r\n").startswith("<")
    if isinstance(source, (bytes, bytearray)):
        return bytes(source).removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"<")
    return False
