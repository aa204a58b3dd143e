import os

import torch
from hypothesis import HealthCheck, settings

# One torch thread for the whole test session. The tests make many small tensor calls, where
# threads only add hand-offs: on a busy 2-core machine a chapter 7 check test went from 1.8 s to
# 24 s with torch's default thread pool, and one thread also makes every sum run in one order.
torch.set_num_threads(1)

# Property tests: enough examples to find a broken law, few enough to keep the suite fast.
settings.register_profile(
    "course", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "course"))


def answer_functions(notebook_path):
    """The functions a chapter notebook defines (its answer cells), executed in a fresh namespace.

    Runs every code cell except the checks (``.check(``, ``scorecard(``) and IPython magics, so a
    test gets the solutions notebook's worked answers, or the exercises notebook's untouched stubs.
    """
    import nbformat

    namespace = {"__name__": "chapter_answers"}
    for cell in nbformat.read(notebook_path, as_version=4).cells:
        if cell.cell_type != "code" or ".check(" in cell.source or "scorecard(" in cell.source:
            continue
        source = "\n".join(ln for ln in cell.source.splitlines() if not ln.startswith("%"))
        exec(compile(source, str(notebook_path), "exec"), namespace)
    return namespace
