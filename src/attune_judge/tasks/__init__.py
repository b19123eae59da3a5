"""AttuneBench evaluated-model tasks: programs, scorers, runs and the cross-task analysis.

The five tasks (ATTUNEBENCH.md): ``drafting`` (a reply scored by a reference judge against the
participant-edited one, plus its alignment with the participant's preferred behaviour),
``emotion`` (PANAS-SF tags), ``behaviour`` (what the original reply did / what the participant
wanted), ``preference`` (which response the participant chose) and ``conversation``
(post-PANAS, q1-q3, four-branch scores). :func:`run_bench` runs them for several models into a
run directory; :func:`analyse_records` ranks the models per task with intervals and measures
how far the task rankings agree.
"""

from attune_judge.tasks._run import BenchConfig, run_bench

__all__ = [
    "BenchConfig",
    "run_bench",
]
