"""Human labels where they are made: ``attune-judge annotate``.

A local web server (Starlette + uvicorn) serves a blind labelling page over the items ``score``
reads; labels go to a SQLite database (:class:`LabelStore`), one committed transaction each;
``annotate export`` writes the ``Rating`` / ``Preference`` records ``calibrate``,
``rank --human`` and ``align`` read; ``annotate sample`` draws what to label with inclusion
probabilities. The JSON API is documented in :mod:`attune_judge.annotate._app`.
"""

from attune_judge.annotate._agreement import agreement, annotator_alpha
from attune_judge.annotate._answers import GROUP, BadAnswerError, check_answers, to_records
from attune_judge.annotate._export import (
    export_labels,
    export_records,
    import_labelstudio,
    label_config,
    open_store,
    store_rubric,
)
from attune_judge.annotate._items import TASKS, Task, blind_view, check_task, load_items, swapped
from attune_judge.annotate._sample import SAMPLE_BY, conversations_needed, sample_items
from attune_judge.annotate._serve import is_loopback, prepare, serve
from attune_judge.annotate._store import LEASE_S, LabelStore

__all__ = [
    "GROUP",
    "LEASE_S",
    "SAMPLE_BY",
    "TASKS",
    "BadAnswerError",
    "LabelStore",
    "Task",
    "agreement",
    "annotator_alpha",
    "blind_view",
    "check_answers",
    "check_task",
    "conversations_needed",
    "export_labels",
    "export_records",
    "import_labelstudio",
    "is_loopback",
    "label_config",
    "load_items",
    "open_store",
    "prepare",
    "sample_items",
    "serve",
    "store_rubric",
    "swapped",
    "to_records",
]
