"""Sweeps: grids of simulations beyond one machine. A TOML spec expands into tasks (one per problem,
algorithm setting and run) that run on local processes or a Ray cluster and stream into a resumable
Parquet result store; :func:`report` draws its figures and tables.

(The live online experiments of ``irbandits serve`` are another thing: :mod:`irbandits.service`.)

The tasks run on :func:`irbandits.tasks.run_tasks`, the task runner of every heavy job.
"""

from irbandits.sweeps.run import TasksFailed, run_seed, run_sweep
from irbandits.sweeps.spec import SweepSpec, Task, load_spec
from irbandits.sweeps.store import ResultStore, read_rows

__all__ = ["ResultStore", "SweepSpec", "Task", "TasksFailed", "load_spec", "read_rows", "run_seed", "run_sweep"]
