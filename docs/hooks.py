"""MkDocs hooks: pages generated at build time from the code and from the repository's own files.

- ``<!-- irbandits:cli -->`` becomes the command reference, walked from the typer app, so every
  command, argument and option the installed ``irbandits`` has is listed, with its help text.
- ``<!-- irbandits:reproduction -->`` becomes ``REPRODUCTION.md`` from the repository root, with its
  figure paths (``docs/figures/...``) made relative to the docs folder.
"""

from __future__ import annotations

from pathlib import Path

import click

CLI_MARKER = "<!-- irbandits:cli -->"
REPRODUCTION_MARKER = "<!-- irbandits:reproduction -->"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _type(param: click.Parameter) -> str:
    if isinstance(param.type, click.Choice):
        return " \\| ".join(f"`{c}`" for c in param.type.choices)
    if getattr(param, "is_flag", False):
        return "flag"
    return param.type.name.lower()


def _default(param: click.Parameter) -> str:
    default = param.default
    if default is None or default == () or getattr(param, "is_flag", False) and not param.secondary_opts:
        return ""
    if getattr(param, "is_flag", False):
        return f"`{param.opts[0] if default else param.secondary_opts[0]}`"
    return f"`{default}`"


def _params_table(command: click.Command) -> list[str]:
    rows = []
    for p in command.params:
        if getattr(p, "hidden", False):
            continue
        if isinstance(p, click.Argument):
            name = f"`{p.human_readable_name}`" + ("" if p.required else " (optional)")
        else:
            name = " / ".join(f"`{o}`" for o in (*p.opts, *p.secondary_opts))
            if p.multiple:
                name += " (repeatable)"
        rows.append(f"| {name} | {_type(p)} | {_default(p)} | {_cell(getattr(p, 'help', '') or '')} |")
    if not rows:
        return []
    return ["| argument / option | type | default | description |", "|---|---|---|---|", *rows, ""]


def _command_markdown(command: click.Command, ctx: click.Context, level: int) -> list[str]:
    path = ctx.command_path
    lines = [f"{'#' * level} `{path}` {{ #{path.replace(' ', '-')} }}", ""]
    if command.help:
        lines += [command.help.strip().replace("\b\n", ""), ""]
    usage = " ".join([path, *command.collect_usage_pieces(ctx)])
    lines += ["```text", usage, "```", ""]
    lines += _params_table(command)
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                lines += _command_markdown(sub, click.Context(sub, info_name=name, parent=ctx), min(level + 1, 4))
    return lines


def cli_reference() -> str:
    """The command reference of ``irbandits``, one section per command, walked from the typer app."""
    import typer

    from irbandits.cli import app

    root = typer.main.get_command(app)
    return "\n".join(_command_markdown(root, click.Context(root, info_name="irbandits"), 2))


def on_page_markdown(markdown: str, page, config, files) -> str:
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    if REPRODUCTION_MARKER in markdown:
        text = (Path(config.config_file_path).parent / "REPRODUCTION.md").read_text()
        markdown = markdown.replace(REPRODUCTION_MARKER, text.replace("](docs/", "]("))
    return markdown
