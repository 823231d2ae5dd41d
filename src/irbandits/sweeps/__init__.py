"""Experiments beyond one machine: a TOML spec expands into tasks (one per problem, algorithm
setting and run) that run on local processes or a Ray cluster and stream into a resumable Parquet
result store; :func:`report` draws its figures and tables.

The tasks run on :func:`irbandits.tasks.run_tasks`, the task runner of every heavy job.
"""

from irbandits.experiments.run import TasksFailed, run_experiment, run_seed
from irbandits.experiments.spec import ExperimentSpec, Task, load_spec
from irbandits.experiments.store import ResultStore, read_rows

__all__ = ["ExperimentSpec", "ResultStore", "Task", "TasksFailed", "load_spec", "read_rows", "run_experiment",
           "run_seed"]
