"""What a user reads in a Markdown source the app built: CommonMark backslash escapes removed.

The app escapes every value from data before it reaches Markdown (``app/components/text.py``), so an AppTest
element's ``value`` (its Markdown *source*) holds ``3\\.4\\:`` where the page shows ``3.4:``.  Tests that look for
text a user sees compare :func:`rendered` sources.
"""

from __future__ import annotations

import re

_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def rendered(source: str) -> str:
    """``source`` with every backslash-escaped ASCII punctuation character shown as itself."""
    return _ESCAPED.sub(r"\1", source)
