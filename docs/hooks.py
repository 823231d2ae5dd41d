"""MkDocs hooks: pages generated at build time from the code and from the repository's own files.

- ``<!-- irbandits:cli -->`` becomes the command reference, walked from the typer app, so every
  command, argument and option the installed ``irbandits`` has is listed, with its help text.
- ``<!-- irbandits:reproduction -->`` becomes ``REPRODUCTION.md`` from the repository root, with its
  figure paths (``docs/figures/...``) made relative to the docs folder.
"""

from __future__ import annotations

import html
from pathlib import Path

CLI_MARKER = "<!-- irbandits:cli -->"
REPRODUCTION_MARKER = "<!-- irbandits:reproduction -->"


def _escape(text: str) -> str:
    """Help text as Markdown: HTML-escaped outside `code spans` (``docno<TAB>text`` is no tag)."""
    return "`".join(p if i % 2 else html.escape(p, quote=False) for i, p in enumerate(text.split("`")))


def _cell(text: str) -> str:
    return _escape(" ".join(text.split())).replace("|", "\\|")


def _params_table(command, ctx) -> list[str]:
    # typer builds on its own copy of click (``typer._click``): read the tree through click's
    # public methods (get_help_record, list_commands, ...), never isinstance checks against click.
    rows = []
    for p in command.params:
        record = p.get_help_record(ctx)
        if record is None:  # hidden
            continue
        names, help_text = record
        rows.append(f"| `{names}` | {_cell(help_text)} |")
    if not rows:
        return []
    return ["| argument / option | description |", "|---|---|", *rows, ""]


def _command_markdown(command, ctx, level: int) -> list[str]:
    path = ctx.command_path
    lines = [f"{'#' * level} `{path}` {{ #{path.replace(' ', '-')} }}", ""]
    if command.help:
        lines += [_escape(command.help.strip().replace("\b\n", "")), ""]
    usage = " ".join([path, *command.collect_usage_pieces(ctx)])
    lines += ["```text", usage, "```", ""]
    lines += _params_table(command, ctx)
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                lines += _command_markdown(sub, sub.context_class(sub, info_name=name, parent=ctx), min(level + 1, 4))
    return lines


def cli_reference() -> str:
    """The command reference of ``irbandits``, one section per command, walked from the typer app."""
    import typer

    from irbandits.cli import app

    root = typer.main.get_command(app)
    return "\n".join(_command_markdown(root, root.context_class(root, info_name="irbandits"), 2))


def on_page_markdown(markdown: str, page, config, files) -> str:
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    if REPRODUCTION_MARKER in markdown:
        text = (Path(config.config_file_path).parent / "REPRODUCTION.md").read_text()
        markdown = markdown.replace(REPRODUCTION_MARKER, text.replace("](docs/", "]("))
    return markdown
