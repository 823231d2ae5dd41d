"""``irbandits reproduce ...``: the papers' figures, one command each."""

import typer

from irbandits.cli_judge import judging_replay, judging_study

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Reproduce the source papers' figures.")
app.command("judging-study")(judging_study)
app.command("judging-replay")(judging_replay)
