#!/usr/bin/env python3
"""Generate irqres's manual pages and shell completion at build time, each from its one
source, so that none of them can drift from what they describe:

* ``irqres.1``: the click commands' own help, for every subcommand the CLI lists (a new
  subcommand appears without any change here);
* ``irqresd.8``: ``man/irqresd.8.md``, its OPTIONS from ``irqresd --help`` and its
  request list from the table of docs/protocol.md;
* ``irqres-profile.5``: docs/profile.md;
* ``irqres.bash`` and ``_irqres``: click's bash and zsh completion of ``irqres``.

usage: mkman.py --irqresd BUILT_IRQRESD --out DIR --completion-out DIR

The roff written is plain man(7): groff and mandoc render it without warnings (tests/
python/test_manpages.py checks that with ``man --warnings -l`` and lexgrog).
"""

from __future__ import annotations

import argparse
import datetime
import inspect
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "analysis"))  # document the checkout, not an installed copy

import click  # noqa: E402
from click.shell_completion import get_completion_class  # noqa: E402
from irqres import __version__  # noqa: E402
from irqres.cli import main as cli_main  # noqa: E402

PROG = "irqres"
COMPLETE_VAR = "_IRQRES_COMPLETE"


class ManError(Exception):
    """A source the pages are made from is not in the shape this generator reads."""


# -- roff --------------------------------------------------------------------------------
def esc(text: str) -> str:
    """Escape running text for roff: backslashes, minus signs, anything not ASCII."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)


def line_safe(line: str) -> str:
    """A text line must not start with a control character (. or ')."""
    return "\\&" + line if line[:1] in (".", "'") else line


_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])"
                     r"|\[([^\]]+)\]\(([^)]+)\)")


def inline(text: str) -> str:
    """Markdown inline markup (code, strong, emphasis, links) to roff fonts."""
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(esc(text[pos:m.start()]))
        code, strong, em, label, _url = m.groups()
        if code is not None:
            # a long JSON or path may break after a comma or slash (\\: is invisible)
            out.append("\\fB" + re.sub(r"([,/])", r"\1\\:", esc(code)) + "\\fR")
        elif strong is not None:
            out.append(f"\\fB{esc(strong)}\\fR")
        elif em is not None:
            out.append(f"\\fI{esc(em)}\\fR")
        else:
            out.append(esc(label))
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out)


def preformatted(lines: Iterable[str]) -> list[str]:
    return [".PP", ".RS 4", ".nf", *(line_safe(esc(x)) for x in lines), ".fi", ".RE"]


def table(rows: list[list[str]]) -> list[str]:
    """A markdown table: two columns as a tagged list (term, then its text), wider ones
    as a tbl(1) table (the page then starts with '\\" t)."""
    width = len(rows[0])
    if width == 2:
        return [x for row in rows[1:] for x in
                (".TP", line_safe(inline(row[0])), line_safe(inline(row[1] if row[1:] else "")))]
    fmt = " ".join(["l"] + ["lx"] * (width - 1)) + "."
    out = [".PP", ".TS", "tab(\t);", " ".join(["lb"] * width), fmt]
    for i, row in enumerate(rows):
        cells = [*row, *[""] * (width - len(row))][:width]
        out.append("\t".join(f"T{{\n{line_safe(inline(c))}\nT}}" for c in cells))
        if i == 0:
            out.append("_")
    out.append(".TE")
    return out


def split_row(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [c.strip().replace("\\|", "|") for c in cells]


def markdown(lines: list[str]) -> list[str]:
    """The markdown subset of docs/*.md (headings, paragraphs, fenced code, bullet lists,
    tables) as man(7) roff. ``#`` titles are left to the caller."""
    out: list[str] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            out.extend([".PP", *(line_safe(inline(x)) for x in para)])
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if line.startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            if j == len(lines):
                raise ManError(f"line {i + 1}: code block never closed")
            out.extend(preformatted(x.rstrip() for x in lines[i + 1:j]))
            i = j + 1
            continue
        if line.startswith("#"):
            flush()
            level, title = len(line) - len(line.lstrip("#")), line.lstrip("#").strip()
            if level == 2:
                out.append(f'.SH "{inline(title.upper())}"')
            elif level >= 3:
                out.append(f'.SS "{inline(title)}"')
            i += 1
            continue
        if line.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                if not re.fullmatch(r"\|[\s:|-]+\|?", lines[i].strip()):
                    rows.append(split_row(lines[i]))
                i += 1
            out.extend(table(rows))
            continue
        if re.match(r"[-*] ", line):
            flush()
            item = [line[2:].strip()]
            i += 1
            while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                item.append(lines[i].strip())
                i += 1
            out.extend([".IP \\(bu 2", *(line_safe(inline(x)) for x in item)])
            continue
        if not line.strip():
            flush()
        else:
            para.append(line.strip())
        i += 1
    flush()
    return out


def header(name: str, section: int, manual: str, date: str, tbl: bool) -> list[str]:
    return [*(["'\\\" t"] if tbl else []),
            f'.TH "{name.upper()}" "{section}" "{date}" "irqres {__version__}" "{manual}"',
            ".ad l"]  # ragged right: JSON and paths leave nothing to justify a line with


def page(name: str, section: int, manual: str, date: str, body: list[str]) -> str:
    tbl = ".TS" in body
    return "\n".join([*header(name, section, manual, date, tbl), *body]) + "\n"


def build_date() -> str:
    """SOURCE_DATE_EPOCH (reproducible builds, dpkg sets it), else the last commit's date."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        git = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%ct"],
                             capture_output=True, text=True, check=False)
        epoch = git.stdout.strip() or "0"
    return datetime.datetime.fromtimestamp(int(epoch), datetime.UTC).strftime("%Y-%m-%d")


# -- irqres(1), from the click commands ------------------------------------------------------
def help_paragraphs(text: str) -> list[str]:
    """A click help text (``\\b`` blocks keep their lines, ``\\f`` ends it) as roff."""
    text = inspect.cleandoc(text.split("\f")[0])
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines = block.splitlines()
        if not lines:
            continue
        if lines[0].strip() == "\b":
            out.extend(preformatted(lines[1:]))
        else:
            out.extend([".PP", *(line_safe(esc(x.strip())) for x in lines)])
    return out


def option_term(opts: str) -> str:
    """``-n, --dry-run`` / ``--period DURATION``: option names bold, metavars italic."""
    parts = re.split(r"(\s*,\s*|\s*/\s*|\s+)", opts)
    return "".join(p if not p.strip() or p.strip() in (",", "/")
                   else f"\\fB{esc(p)}\\fR" if p.startswith("-") else f"\\fI{esc(p)}\\fR"
                   for p in parts)


def options(cmd: click.Command, ctx: click.Context, *, with_help: bool) -> list[str]:
    out = []
    for param in cmd.get_params(ctx):
        rec = param.get_help_record(ctx)
        if rec is None or (not with_help and "--help" in param.opts):
            continue
        out.extend([".TP", option_term(rec[0]), line_safe(esc(rec[1] or ""))])
    return out


def usage(cmd: click.Command, ctx: click.Context) -> str:
    return " ".join([ctx.command_path, *cmd.collect_usage_pieces(ctx)])


def irqres_page(date: str) -> str:
    top = click.Context(cli_main, info_name=PROG)
    names = cli_main.list_commands(top)
    if not names:
        raise ManError("irqres lists no subcommands")
    body = [".SH NAME", f"{PROG} \\- {esc(first_line(cli_main.help))}",
            ".SH SYNOPSIS", f".B {PROG}", "[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR "
            "[\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR]", ".SH DESCRIPTION",
            *help_paragraphs(rest_lines(cli_main.help)),
            ".PP", "Every command takes \\fB\\-\\-help\\fR. The commands are:",
            *(x for n in names for x in (".TP", f"\\fB{esc(n)}\\fR",
                                         esc(cli_main.get_command(top, n).get_short_help_str(
                                             limit=200)))),
            ".SH GLOBAL OPTIONS", *options(cli_main, top, with_help=True),
            ".SH COMMANDS"]
    for name in names:
        cmd = cli_main.get_command(top, name)
        if cmd is None:
            raise ManError(f"irqres {name}: listed but cannot be loaded")
        ctx = click.Context(cmd, info_name=name, parent=top)
        body.extend([f'.SS "{esc(usage(cmd, ctx))}"', *help_paragraphs(cmd.help or ""),
                     # the example line as typed: never filled or hyphenated
                     *(preformatted(inspect.cleandoc(cmd.epilog).splitlines()) if cmd.epilog
                       else []), *options(cmd, ctx, with_help=False)])
    body += [
        ".SH ENVIRONMENT", ".TP", "\\fBIRQRES_SOCKET\\fR",
        "irqresd's control socket, as \\fB\\-\\-socket\\fR names it (which wins). A socket "
        "named either way is that daemon or an error: when it does not answer, "
        "\\fBstatus\\fR shows the state file of the socket's directory and exits 1, and "
        "\\fBapply\\fR, \\fBverify\\fR and \\fBrestore\\fR change nothing and exit 1 "
        "unless a run directory is named too.",
        ".TP", "\\fBIRQRES_RUN_DIR\\fR",
        "irqresd's run directory, as \\fB\\-\\-run\\-dir\\fR names it (which wins): its "
        "socket is \\fIDIR\\fR/irqresd.sock unless one is named, and its state file "
        "\\fIDIR\\fR/state is where \\fBstatus\\fR, \\fBapply\\fR and \\fBrestore\\fR work "
        "when no daemon answers (\\fBirqresd \\-\\-run\\-dir\\fR \\fIDIR\\fR). Default "
        "/run/irqres.",
        ".TP", "\\fBIRQRESD\\fR",
        "The irqresd binary that \\fBapply\\fR, \\fBstatus\\fR, \\fBverify\\fR and "
        "\\fBrestore\\fR run when no daemon listens (\\fBirqresd \\-\\-once\\fR, "
        "\\fB\\-\\-status\\fR, \\fB\\-\\-verify\\fR, \\fB\\-\\-restore\\fR); by default "
        "the one on \\fBPATH\\fR or in /usr/sbin.",
        ".SH FILES", ".TP", "/run/irqres/irqresd.sock", "irqresd's control socket.",
        ".TP", "/run/irqres/state",
        "irqresd's state file: every thread it changed and how it was before (policy, "
        "priority, cgroup, CPU affinity). \\fBirqres status\\fR shows it when no daemon "
        "answers; \\fBirqres restore\\fR (\\fBirqresd \\-\\-restore\\fR) puts them back.",
        ".TP", "/etc/irqres/profile.yaml", "The profile irqresd.service applies at boot.",
        ".SH EXIT STATUS", "0 on success; 1 when a command fails (the message says what "
        "and why); 2 for a bad option or argument.",
        ".SH SEE ALSO", "\\fBirqresd\\fR(8), \\fBirqres\\-profile\\fR(5), "
        "\\fBtrace\\-cmd\\fR(1), \\fBchrt\\fR(1), \\fBsched\\fR(7)"]
    return page(PROG, 1, "User Commands", date, body)


def first_line(text: str | None) -> str:
    line = inspect.cleandoc(text or "").splitlines()[0]
    return line.split(":", 1)[1].strip().rstrip(".") if ":" in line else line


def rest_lines(text: str | None) -> str:
    return "\n".join(inspect.cleandoc(text or "").splitlines()[1:])


# -- irqresd(8) ------------------------------------------------------------------------------
def parse_daemon_help(text: str) -> tuple[list[str], list[tuple[str, list[str]]], list[str]]:
    """``irqresd --help``: (description lines, [(option term, help lines)], trailer lines).

    Strict: every line between the description and the trailer is an option or its
    continuation, so a change of layout fails the build instead of losing an option.
    """
    blocks = [b.splitlines() for b in re.split(r"\n\s*\n", text.strip())]
    if len(blocks) < 2 or not blocks[0][0].startswith("Usage:"):
        raise ManError("irqresd --help: no 'Usage:' block")
    opts: list[tuple[str, list[str]]] = []
    start = re.compile(r"^ {2,6}(-\S.*?)(?: {2,}(\S.*))?$")
    trailer: list[str] = []
    for block in blocks[1:]:
        if not start.match(block[0]):
            if opts:
                trailer.extend(block)
            continue
        for line in block:
            m = start.match(line)
            if m:
                opts.append((m.group(1).strip(), [m.group(2)] if m.group(2) else []))
            elif line.startswith(" " * 8) and opts:
                opts[-1][1].append(line.strip())
            else:
                raise ManError(f"irqresd --help: cannot read the option line {line!r}")
    if not opts:
        raise ManError("irqresd --help: no options found")
    return blocks[0][1:], opts, trailer


def protocol_table(path: Path) -> list[list[str]]:
    rows, seen = [], False
    for line in path.read_text().splitlines():
        if line.startswith("|"):
            seen = True
            if not re.fullmatch(r"\|[\s:|-]+\|?", line.strip()):
                rows.append(split_row(line))
        elif seen:
            break
    if not rows:
        raise ManError(f"{path}: no request table")
    return rows


def irqresd_page(irqresd: Path, date: str) -> str:
    help_text = subprocess.run([str(irqresd), "--help"], capture_output=True, text=True,
                               check=True).stdout
    desc, opts, trailer = parse_daemon_help(help_text)
    src = REPO / "man" / "irqresd.8.md"
    text = src.read_text()
    for marker in ("@OPTIONS@", "@DESCRIPTION@", "@REQUESTS@"):
        if f"\n{marker}\n" not in text:
            raise ManError(f"{src}: no {marker} line")
    body: list[str] = []
    for line in markdown(text.splitlines()[1:]):
        if line == "@OPTIONS@":
            body.extend(option_items(opts))
        elif line == "@DESCRIPTION@":
            body.extend([".PP", *(line_safe(esc(x.strip())) for x in desc)])
            if trailer:
                body.extend([".PP", *(line_safe(esc(x.strip())) for x in trailer)])
        elif line == "@REQUESTS@":
            body.extend(table(protocol_table(REPO / "docs" / "protocol.md")))
        else:
            body.append(line)
    return page("irqresd", 8, "System Administration", date, body)


def option_items(opts: list[tuple[str, list[str]]]) -> Iterator[str]:
    for term, text in opts:
        yield ".TP"
        yield option_term(term)
        yield from (line_safe(esc(x)) for x in text)


# -- irqres-profile(5) ----------------------------------------------------------------------
def profile_page(date: str) -> str:
    lines = (REPO / "docs" / "profile.md").read_text().splitlines()
    if not lines or not lines[0].startswith("# "):
        raise ManError("docs/profile.md: no '# title' line")
    body = [".SH NAME", "irqres\\-profile \\- the YAML profile of irqresd and irqres",
            ".SH SYNOPSIS", "/etc/irqres/profile.yaml", ".SH DESCRIPTION",
            *markdown(lines[1:]),
            ".SH FILES", ".TP", "/etc/irqres/profile.yaml",
            "The profile irqresd.service applies at boot (and re\\-reads on reload).",
            ".TP", "/usr/share/doc/irqres/examples/profile.yaml",
            "A commented example to start from.", ".TP", "/usr/share/irqres/profiles/",
            "More examples: a multi\\-queue NIC, a video player beside a NIC, an adaptive "
            "target.",
            ".SH SEE ALSO", "\\fBirqresd\\fR(8), \\fBirqres\\fR(1)"]
    return page("irqres-profile", 5, "File Formats", date, body)


# -- completion ------------------------------------------------------------------------------
def completion(shell: str) -> str:
    cls = get_completion_class(shell)
    if cls is None:
        raise ManError(f"click has no {shell} completion")
    return cls(cli_main, {}, PROG, COMPLETE_VAR).source()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--irqresd", type=Path, required=True, help="the built irqresd")
    ap.add_argument("--out", type=Path, required=True, help="where the pages go")
    ap.add_argument("--completion-out", type=Path, required=True,
                    help="where the completion scripts go")
    args = ap.parse_args()
    date = build_date()
    try:
        pages = {"irqres.1": irqres_page(date), "irqresd.8": irqresd_page(args.irqresd, date),
                 "irqres-profile.5": profile_page(date)}
        completions = {"irqres.bash": completion("bash"), "_irqres": completion("zsh")}
    except (ManError, OSError, subprocess.CalledProcessError) as exc:
        print(f"mkman: {exc}", file=sys.stderr)
        return 1
    for out, files in ((args.out, pages), (args.completion_out, completions)):
        out.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (out / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
