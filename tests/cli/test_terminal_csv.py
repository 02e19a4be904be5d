"""CSV written to a terminal shows what a terminal could act on (ESC, bidirectional overrides) as text; CSV to a
file or a pipe keeps the data exactly."""

from __future__ import annotations

import io
import os
import subprocess
import sys

from graphlink.display import terminal_stream

HOSTILE = "\x1b[31mESC\x1b[0m"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_stream_shows_controls_and_keeps_line_breaks_and_tabs() -> None:
    tty = _Tty()
    terminal_stream(tty).write(f"a,{HOSTILE}\tb\u202ec\nnext\n")
    assert tty.getvalue() == "a,\\x1b[31mESC\\x1b[0m\tb\\u202ec\nnext\n"
    plain = io.StringIO()
    assert terminal_stream(plain) is plain


def test_risk_csv_on_a_terminal_cannot_act_on_it(tmp_path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("location,kind,element\n" + "".join(
        f"L1,identified,p{i}{HOSTILE}\nL1,deidentified,d{i}{HOSTILE}\n" for i in range(3)), encoding="utf-8")
    main, child = os.openpty()
    proc = subprocess.run([sys.executable, "-m", "graphlink.cli", "risk", str(path), "--reserved", "deidentified",
                           "--format", "csv"], stdout=child, stderr=subprocess.PIPE, timeout=300)
    os.close(child)
    out = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:                          # the terminal's other end is closed: everything was read
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    assert proc.returncode == 0, proc.stderr
    assert b"\x1b" not in out and b"\\x1b[31mESC" in out
    piped = subprocess.run([sys.executable, "-m", "graphlink.cli", "risk", str(path), "--reserved", "deidentified",
                            "--format", "csv"], capture_output=True, timeout=300)
    assert piped.returncode == 0 and HOSTILE.encode() in piped.stdout      # a file or pipe gets the data as is


def test_risk_table_names_a_person_without_a_possible_record_in_words(tmp_path) -> None:
    """A person whose trail no record fits is listed with "(none possible)", not a missing-value marker."""
    from tests.cli_runner import run_cli

    path = tmp_path / "r.csv"
    path.write_text("location,kind,element\nL1,identified,a\nL1,deidentified,x\nL2,identified,lonely\n",
                    encoding="utf-8")
    done = run_cli("risk", str(path), "--reserved", "deidentified")
    assert done.returncode == 0, done.stderr
    assert "(none possible)" in done.stdout and "nan" not in done.stdout.lower().split()
