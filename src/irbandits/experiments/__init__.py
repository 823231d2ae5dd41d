"""Experiments beyond one machine: a TOML spec expands into tasks (one per problem, algorithm
setting and run) that run on local processes or a Ray cluster and stream into a resumable Parquet
result store; :func:`report` draws its figures and tables.

The same task runner, :func:`run_tasks`, carries the other heavy jobs (``matrix``, ``reproduce
judging-study``, ``pool simulate``) to Ray.
"""

from irbandits.experiments.backends import BACKENDS, Done, Failed, run_tasks
from irbandits.experiments.run import ExperimentInterrupted, TasksFailed, run_experiment, run_seed
from irbandits.experiments.spec import ExperimentSpec, Task, load_spec
from irbandits.experiments.store import ResultStore, read_rows

__all__ = ["BACKENDS", "Done", "ExperimentInterrupted", "ExperimentSpec", "Failed", "ResultStore", "Task",
           "TasksFailed", "load_spec", "read_rows", "run_experiment", "run_seed", "run_tasks"]
