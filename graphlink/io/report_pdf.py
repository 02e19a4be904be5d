"""The release report as a PDF, printed by headless Chromium from the report's HTML (docs/report.md).

graphlink draws no PDF itself: the HTML report (:func:`graphlink.io.report_html.render_html`) is already laid out for
print (A4, rows, charts and cards kept whole, headings kept with what follows them, an appendix on its own pages),
and a browser's print engine turns it into the PDF a board receives, with the fonts and the text layer a reader
expects. Chromium is found as ``$CHROMIUM``, else ``chromium``, ``chromium-browser``, ``google-chrome`` on the
``PATH`` (Debian: ``apt-get install chromium``). Cost: one browser start, about 1-3 s.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from graphlink.errors import ReleaseError
from graphlink.fileio import atomic_path

#: how long the browser may take to print (it loads one local file with no external asset)
PRINT_TIMEOUT = 120.0
_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """The Chromium (or Chrome) executable to print with, or None.  ``$CHROMIUM`` wins when it names a program."""
    from graphlink.config import get_config

    named = get_config().chromium
    if named and shutil.which(named):
        return shutil.which(named)
    return next((found for name in _BROWSERS if (found := shutil.which(name))), None)


def write_pdf(html: str, target: str | Path, *, browser: str | None = None) -> Path:
    """Print the report's HTML to ``target`` as a PDF with headless Chromium (atomically: the file appears
    complete or not at all).

    Parameters
    ----------
    html : str
        A complete HTML document with no external asset (the report).
    target : str or Path
        The PDF to write.
    browser : str, optional
        The Chromium executable (default: :func:`find_chromium`).

    Returns
    -------
    Path
        ``target``.

    Raises
    ------
    ReleaseError
        No Chromium was found, or it failed or took longer than :data:`PRINT_TIMEOUT` (one line, exit 2).

    Examples
    --------
    >>> import graphlink as gl, tempfile, pathlib
    >>> from graphlink.report import build_report
    >>> from graphlink.io.report_html import render_html
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "report.pdf"
    >>> write_pdf(render_html(build_report(gl.thesis_example(), 2)), out).read_bytes()[:5]  # doctest: +SKIP
    b'%PDF-'
    """
    exe = browser or find_chromium()
    if exe is None:
        raise ReleaseError("a PDF report needs Chromium to print it (Debian: apt-get install chromium; or set "
                           "CHROMIUM to the browser's path); write the report as .html and print it from any "
                           "browser instead")
    with tempfile.TemporaryDirectory(prefix="graphlink-report-") as tmp:
        page = Path(tmp) / "report.html"
        page.write_text(html, encoding="utf-8")
        with atomic_path(target) as part:
            # a private profile in the temporary folder: no user profile is read or changed; no network is needed
            cmd = [exe, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
                   "--disable-dev-shm-usage", f"--user-data-dir={Path(tmp) / 'profile'}",
                   "--no-pdf-header-footer", "--print-to-pdf-no-header", f"--print-to-pdf={part}",
                   page.as_uri()]
            try:
                proc = subprocess.run(cmd, capture_output=True, timeout=PRINT_TIMEOUT, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                raise ReleaseError(f"Chromium did not print the report within {PRINT_TIMEOUT:.0f} s") from None
            except OSError as exc:
                raise ReleaseError(f"Chromium could not be started ({exc.strerror or exc})") from None
            if proc.returncode != 0 or not part.exists() or part.stat().st_size == 0:
                raise ReleaseError(f"Chromium could not print the report (exit code {proc.returncode})")
    return Path(target)
