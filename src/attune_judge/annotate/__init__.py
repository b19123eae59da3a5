"""Human labels where they are made: ``attune-judge annotate``.

A local web server (Starlette + uvicorn) serves a blind labelling page over the items ``score``
reads; labels go to a SQLite database (:class:`LabelStore`), one committed transaction each;
``annotate export`` writes the ``Rating`` / ``Preference`` records ``calibrate``,
``rank --human`` and ``align`` read; ``annotate sample`` draws what to label with inclusion
probabilities. The JSON API is documented in :mod:`attune_judge.annotate._app`.

``attune-judge view`` is the same web stack read-only: every judgment of a run, filtered and
sorted in SQLite, one judgment's page, and where the judge and the people disagree most
(:mod:`attune_judge.annotate._view_app`); ``report RUN --items`` writes those pages as one
static file (:func:`write_items_html`).
"""

from typing import Any

from attune_judge.annotate._export import export_labels, import_labelstudio
from attune_judge.annotate._items import load_items
from attune_judge.annotate._sample import conversations_needed, sample_items
from attune_judge.annotate._serve import prepare, serve
from attune_judge.annotate._store import LabelStore
from attune_judge.annotate._view_static import write_items_html


def view(*args: Any, **kwargs: Any) -> None:
    """Serve the run viewer (:func:`attune_judge.annotate._view_app.view`; Starlette and
    uvicorn are imported only then)."""
    from attune_judge.annotate._view_app import view as serve_view

    serve_view(*args, **kwargs)


__all__ = [
    "LabelStore",
    "conversations_needed",
    "export_labels",
    "import_labelstudio",
    "load_items",
    "prepare",
    "sample_items",
    "serve",
    "view",
    "write_items_html",
]
