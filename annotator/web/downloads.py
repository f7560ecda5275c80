"""The ``Content-Disposition`` header of a download, whatever its file name holds.

Export file names carry scale and benchmark names, which the study file
allows in any script: written raw into the header, a name outside Latin-1
failed in the WSGI server (a bare 500), and a quote or a line break would
break the header. RFC 6266 gives the name twice: ``filename`` in ASCII
(other characters as ``_``) for old clients, ``filename*`` in UTF-8,
percent-encoded (RFC 8187), which browsers prefer.
"""

from __future__ import annotations

import re
from urllib.parse import quote

__all__ = ["attachment"]

# What may stay in the quoted ASCII name: no quote, backslash or control.
_NOT_PLAIN = re.compile(r'[^\x20-\x7e]|["\\]')


def attachment(filename: str) -> str:
    """The header's value for a download named ``filename``."""
    plain = _NOT_PLAIN.sub("_", filename)
    if plain == filename:
        return f'attachment; filename="{filename}"'
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(filename, safe='')}"
